package dynamostore

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// noServer points a client at a port nothing listens on: these tests
// never reach the network.
func noServer(o *dynamodb.Options) {
	o.BaseEndpoint = aws.String("http://127.0.0.1:1")
	o.Region = "us-east-1"
}

func TestClose(t *testing.T) {
	s, err := Open(context.Background(), Options{ClientOptions: []func(*dynamodb.Options){noServer}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "twice")

	ctx := context.Background()
	require.ErrorIs(t, s.CreateTable(ctx, storage.TableSpec{Name: "t"}), storage.ErrClosed)
	_, err = s.DescribeTable(ctx, "t")
	require.ErrorIs(t, err, storage.ErrClosed)
	require.ErrorIs(t, s.ListTables(ctx, "", func(string) bool { return true }), storage.ErrClosed)
	require.ErrorIs(t, s.UpdateTable(ctx, "t", storage.TableUpdate{}), storage.ErrClosed)
	require.ErrorIs(t, s.DeleteTable(ctx, "t"), storage.ErrClosed)
	require.ErrorIs(t, s.BatchWrite(ctx, "t", []storage.Item{{PK: "p", SK: "s"}}), storage.ErrClosed)
	_, err = s.GetItem(ctx, "t", "p", "s")
	require.ErrorIs(t, err, storage.ErrClosed)
	for _, it := range []storage.Iterator{s.Query(ctx, storage.Query{Table: "t", PK: "p"}), s.Scan(ctx, "t")} {
		require.False(t, it.Next())
		require.ErrorIs(t, it.Err(), storage.ErrClosed)
		require.ErrorIs(t, it.Close(), storage.ErrClosed)
	}
}

func TestOpenRetryer(t *testing.T) {
	ctx := context.Background()
	built, err := Open(ctx, Options{ClientOptions: []func(*dynamodb.Options){noServer}})
	require.NoError(t, err)
	require.Equal(t, DefaultMaxAttempts, built.Options().MaxAttempts)
	require.Same(t, built.retries.retryer, retryerOf(built), "a client it builds gets the store's retryer")
	require.Equal(t, DefaultMaxAttempts, built.retries.maxAttempts)

	client := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	given, err := Open(ctx, Options{Client: client})
	require.NoError(t, err)
	require.Same(t, client, given.Client())
	require.Equal(t, retry.DefaultMaxAttempts, retryerOf(given).MaxAttempts(), "a client given keeps its retryer")
	require.Equal(t, DefaultWaitMinDelay, given.Options().WaitMinDelay, "no endpoint override: AWS delays")

	given, err = Open(ctx, Options{Client: client, MaxAttempts: 7})
	require.NoError(t, err)
	require.Same(t, given.retries.retryer, retryerOf(given), "unless MaxAttempts is set")
	require.Equal(t, 7, given.retries.maxAttempts)

	_, err = Open(ctx, Options{WriteConcurrency: -1})
	require.ErrorIs(t, err, errInvalidOptions)
}

// retryerOf returns the retryer the store's requests run with.
func retryerOf(s *Store) aws.Retryer {
	o := s.client.Options()
	for _, f := range s.callOpts {
		f(&o)
	}
	return o.Retryer
}
