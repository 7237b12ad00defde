package dynamostore

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestControlCallsEndAtTheirDeadline calls the control plane of an
// endpoint that never answers one operation (dynamofault.Hang), with a
// caller's context that has no deadline: the call fails once
// Options.ControlTimeout is over, with an error naming the operation and
// wrapping storage.ErrUnavailable (a retry may find the endpoint
// answering), and the store's other calls go on.
func TestControlCallsEndAtTheirDeadline(t *testing.T) {
	testEndpoint(t)
	ctx := context.Background()
	hanging := func(op string) *Store {
		faults := dynamofault.New(dynamofault.Options{Mix: dynamofault.Mix{dynamofault.Hang: 1}, Operations: []string{op}})
		return openStore(t, Options{ControlTimeout: 200 * time.Millisecond, ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: faults}
		}}})
	}

	clean := openStore(t, Options{})
	// A DeleteTable never answered.
	s := hanging("DeleteTable")
	name := createTable(t, clean, storage.TableSpec{})
	err := s.DeleteTable(ctx, name)
	require.ErrorIs(t, err, storage.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "DeleteTable not answered within 200ms")
	info, err := s.DescribeTable(ctx, name)
	require.NoError(t, err, "the store's other calls are answered")
	require.Equal(t, storage.StatusActive, info.Status)

	// The DescribeTable of a wait for a table to be active, never
	// answered: the wait ends at the call's deadline.
	s = hanging("DescribeTable")
	name = tableName(t)
	deleteAtCleanup(t, clean, name)
	err = s.CreateTable(ctx, storage.TableSpec{Name: name})
	require.ErrorIs(t, err, storage.ErrUnavailable)
	require.ErrorContains(t, err, "DescribeTable not answered within 200ms")

	// A data-plane call is not bounded by it.
	require.NoError(t, s.BatchWrite(ctx, name, []storage.Item{{PK: "a", SK: "1"}}))
}
