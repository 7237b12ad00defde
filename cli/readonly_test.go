package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage/dynamostore"
)

// Read-only commands create nothing, not even the meta table, and say
// which command does; the first command that writes makes it.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	if os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT") == "" {
		t.Skip("set TIMETABLE_DYNAMODB_ENDPOINT or run `make test` to start a DynamoDB-API server")
	}
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT"))
	b := make([]byte, 4)
	rand.Read(b)
	id := "ro" + hex.EncodeToString(b)
	cfg := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("meta_table: "+id+"_meta\nfamilies:\n  - name: events\n    prefix: "+id+"_ev_\n"), 0o644))
	common := []string{"--store", "dynamodb", "--config", cfg}

	ctx := context.Background()
	store, err := dynamostore.Open(ctx, dynamostore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	ours := func() []string {
		var names []string
		require.NoError(t, store.ListTables(ctx, id, func(name string) bool {
			if !strings.HasPrefix(name, id) {
				return false
			}
			names = append(names, name)
			return true
		}))
		return names
	}
	t.Cleanup(func() {
		for _, n := range ours() {
			_ = store.DeleteTable(ctx, n)
		}
	})

	for _, args := range [][]string{
		{"tables"},
		{"tenant", "list"},
		{"query", "--tenant", "acme", "--table", "t", "--from", "2017-06-01T00:00:00Z", "--to", "2017-06-02T00:00:00Z"},
	} {
		r := run(t, "", append(args, common...)...)
		require.Error(t, r.err, "%v", args)
		require.ErrorContains(t, r.err, "no meta table", "%v", args)
		require.ErrorContains(t, r.err, "timetable tenant add", "%v", args)
	}
	r := mustRun(t, "", append([]string{"reconcile", "--dry-run"}, common...)...)
	require.Contains(t, r.stdout, "create", "a dry run on a new store plans the first tables")
	require.Empty(t, ours(), "read-only commands created tables")

	mustRun(t, "", append([]string{"tenant", "add", "acme"}, common...)...)
	require.Equal(t, []string{id + "_meta"}, ours())
	mustRun(t, "", append([]string{"tables"}, common...)...)
}
