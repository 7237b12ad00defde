package dynamostore

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// sdkLog records what the SDK logs.
type sdkLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *sdkLog) Logf(c logging.Classification, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, string(c)+" "+format+"\n", v...)
}

func (l *sdkLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// An error response without X-Amz-Crc32, as DynamoDB Local sends them,
// is read without the SDK's spurious checksum warning, and still means
// what it says; a response whose checksum is wrong is still caught.
func TestResponseWithoutChecksum(t *testing.T) {
	crc := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if crc != "" {
			w.Header().Set("X-Amz-Crc32", crc)
		}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","Message":"Cannot do operations on a non-existent table"}`)
	}))
	defer srv.Close()
	log := &sdkLog{}
	client := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("k", "s", ""),
		Logger:       log,
	})
	s, err := Open(context.Background(), Options{Client: client, MaxAttempts: 1})
	require.NoError(t, err)
	defer s.Close()

	_, err = s.GetItem(context.Background(), "nope", "a", "b")
	require.ErrorIs(t, err, storage.ErrTableNotFound)
	require.NotContains(t, log.String(), "checksum")

	// A wrong checksum is still a wrong checksum.
	crc = "1"
	_, err = s.GetItem(context.Background(), "nope", "a", "b")
	require.ErrorIs(t, err, storage.ErrTableNotFound)
	require.Contains(t, log.String(), "response did not match expected checksum, 1,")
}
