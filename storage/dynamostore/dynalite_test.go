package dynamostore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/storage"
)

// The tests that need a DynamoDB-API server read its address from this
// variable, which scripts/with-dynalite.sh sets.
const endpointEnv = "TIMETABLE_DYNAMODB_ENDPOINT"

// testEndpoint returns the server's address, or skips the test.
func testEndpoint(tb testing.TB) string {
	tb.Helper()
	ep := os.Getenv(endpointEnv)
	if ep == "" {
		tb.Skip("set TIMETABLE_DYNAMODB_ENDPOINT or run `make test` to start dynalite")
	}
	return ep
}

// localClient points a client at the endpoint, with a region and dummy
// credentials when the environment has none (dynalite checks neither).
func localClient(endpoint string) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		if o.Region == "" {
			o.Region = "us-east-1"
		}
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
			o.Credentials = credentials.NewStaticCredentialsProvider("dynalite", "dynalite", "")
		}
	}
}

// openStore opens a Store on the test server, closed when tb ends. The
// options' ClientOptions apply after those pointing at the server.
func openStore(tb testing.TB, opts Options) *Store {
	tb.Helper()
	ep := testEndpoint(tb)
	opts.ClientOptions = append([]func(*dynamodb.Options){localClient(ep)}, opts.ClientOptions...)
	s, err := Open(context.Background(), opts)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, s.Close()) })
	return s
}

// runID keeps the table names of one test run apart from those of other
// runs against the same server.
var runID = func() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}()

var tableSeq atomic.Int64

// tableName returns a fresh table name for tb.
func tableName(tb testing.TB) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, tb.Name())
	if len(name) > 150 {
		name = name[:150]
	}
	return fmt.Sprintf("ddb_%s_%s_%d", runID, name, tableSeq.Add(1))
}

// createTable creates a table from spec under a fresh name when spec.Name
// is empty, and deletes it when tb ends. It returns the name.
func createTable(tb testing.TB, s *Store, spec storage.TableSpec) string {
	tb.Helper()
	if spec.Name == "" {
		spec.Name = tableName(tb)
	}
	require.NoError(tb, s.CreateTable(context.Background(), spec))
	deleteAtCleanup(tb, s, spec.Name)
	return spec.Name
}

// deleteAtCleanup deletes the table when tb ends, if it still exists:
// dynalite keeps its data in memory and never shrinks.
func deleteAtCleanup(tb testing.TB, s *Store, name string) {
	tb.Cleanup(func() {
		err := s.DeleteTable(context.Background(), name)
		if err != nil && !errors.Is(err, storage.ErrTableNotFound) {
			tb.Errorf("cleanup: delete table %q: %v", name, err)
		}
	})
}

// requireTags checks a table's tags: those asked for, or none on a server
// without tagging (internal/dynamotest).
func requireTags(t *testing.T, want, got map[string]string, msgAndArgs ...any) {
	t.Helper()
	if len(want) == 0 || dynamotest.Lacks(dynamotest.Tagging) != "" {
		require.Empty(t, got, msgAndArgs...)
		return
	}
	require.Equal(t, want, got, msgAndArgs...)
}
