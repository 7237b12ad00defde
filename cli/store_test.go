package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func TestStoreInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store := "--store=pebble:" + dir
	mustRun(t, "", "tenant", "add", "acme", store)
	held, err := pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	defer held.Close()

	for _, args := range [][]string{
		{"query", store, "--tenant", "acme", "--table", "t", "--from", "0", "--to", "1"},
		{"write", store, "--tenant", "acme", "--table", "t"},
		{"tables", store},
	} {
		r := run(t, "", args...)
		require.ErrorContains(t, r.err, "store pebble:"+dir+" is in use, is `timetable serve` running?")
		require.Equal(t, ExitFailure, ExitCode(r.err))
	}
}

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []string{"pebble:", "pebble", "dynamo", "s3:bucket"} {
		_, err := openStore(ctx, spec, storeOptions{})
		require.ErrorContains(t, err, "use pebble:DIR or dynamodb", spec)
		require.Equal(t, ExitUsage, ExitCode(err))
	}
	_, err := openStore(ctx, "pebble:"+filepath.Join(t.TempDir(), "absent"), storeOptions{existing: true})
	require.ErrorContains(t, err, "no store in")

	dir := filepath.Join(t.TempDir(), "new")
	s, err := openStore(ctx, "pebble:"+dir, storeOptions{})
	require.NoError(t, err)
	require.IsType(t, &pebblestore.Store{}, s)
	require.NoError(t, s.Close())
}

// TestOpenDynamoDBStoreRegistersMetrics checks that the DynamoDB store
// gets the registerer of the session: serve exposes its metrics.
func TestOpenDynamoDBStoreRegistersMetrics(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	reg := prometheus.NewRegistry()
	s, err := openStore(context.Background(), "dynamodb", storeOptions{registerer: reg})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, prometheus.Registerer(reg), s.(*dynamostore.Store).Options().Registerer)
	// Registered already: registering the store's metrics again fails.
	err = reg.Register(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "timetable_dynamodb_throttles_total", Help: "x"}, []string{"table", "operation"}))
	require.Error(t, err)
}

// TestStoreKind checks the store kind serve tells the console
// (server.Options.StoreKind) for each --store.
func TestStoreKind(t *testing.T) {
	for spec, want := range map[string]string{"": "pebble", "pebble:./data": "pebble", "dynamodb": "dynamodb"} {
		require.Equal(t, want, storeKind(spec), spec)
	}
}
