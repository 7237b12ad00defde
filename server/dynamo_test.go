package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// dynamoEndpoint returns the DynamoDB-API server of the tests, or skips.
func dynamoEndpoint(t *testing.T) string {
	t.Helper()
	ep := os.Getenv(backends.EndpointEnv)
	if ep == "" {
		t.Skipf("set %s or run `make test` to start dynalite", backends.EndpointEnv)
	}
	return ep
}

// openDynamo opens a DynamoDB store on endpoint with opts, and returns it
// with a configuration whose tables are the test's own. The store is
// closed when the test ends, and the tables it made are deleted through
// a second store on the test server itself, so that a test may leave the
// first one's endpoint down.
func openDynamo(t *testing.T, endpoint string, opts dynamostore.Options) (*dynamostore.Store, family.Schema) {
	t.Helper()
	ctx := context.Background()
	opts.ClientOptions = append([]func(*dynamodb.Options){at(endpoint)}, opts.ClientOptions...)
	s, err := dynamostore.Open(ctx, opts)
	require.NoError(t, err)
	clean, err := dynamostore.Open(ctx, dynamostore.Options{ClientOptions: []func(*dynamodb.Options){at(dynamoEndpoint(t))}})
	require.NoError(t, err)

	b := make([]byte, 4)
	rand.Read(b)
	id := "srv" + hex.EncodeToString(b)
	cfg := family.DefaultSchema()
	cfg.Families[0].Prefix = id + "_ev_"
	cfg.MetaTable = id + "_meta"
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		var names []string
		_ = clean.ListTables(ctx, id, func(name string) bool {
			if !strings.HasPrefix(name, id+"_") {
				return false
			}
			names = append(names, name)
			return true
		})
		for _, n := range names {
			_ = clean.DeleteTable(ctx, n)
		}
		require.NoError(t, clean.Close())
	})
	return s, cfg
}

// at points a client at endpoint with a region and dummy credentials
// (dynalite checks neither).
func at(endpoint string) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.Region = "us-east-1"
		o.Credentials = credentials.NewStaticCredentialsProvider("dynalite", "dynalite", "")
	}
}
