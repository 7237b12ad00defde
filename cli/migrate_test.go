package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMigrateCommand copies a store into another with the command, and
// the target answers the same query with the same key's tenant; run
// again, it writes nothing.
func TestMigrateCommand(t *testing.T) {
	store, _ := seeded(t)
	from := strings.TrimPrefix(store, "--store=")
	to := "pebble:" + filepath.Join(t.TempDir(), "copy")
	r := mustRun(t, "", "migrate", "--from", from, "--to", to, "--page-items", "7")
	require.Contains(t, r.stdout, "timetable_meta\t")
	require.Contains(t, r.stdout, "every table verified")
	require.NotContains(t, r.stdout, "(0 written now)")
	query := []string{"query", "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "ndjson"}
	want := mustRun(t, "", append(query, store)...).stdout
	require.NotEmpty(t, want)
	require.Equal(t, want, mustRun(t, "", append(query, "--store="+to)...).stdout)
	r = mustRun(t, "", "migrate", "--from", from, "--to", to)
	require.Contains(t, r.stdout, "(0 written now)")
}

// TestMigrateUsage refuses what names no migration.
func TestMigrateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "--from", "pebble:a", "--to", "pebble:a"}, "nothing to copy"},
		{[]string{"migrate", "--from", "dynamodb", "--to", "dynamodb"}, "both dynamodb"},
		{[]string{"migrate", "--from", "postgres:x", "--to", "pebble:a"}, "use pebble:DIR or dynamodb"},
		{[]string{"migrate", "--from", "pebble:a", "--to", "pebble:"}, "use pebble:DIR or dynamodb"},
		{[]string{"migrate", "--from", "pebble:a", "--to", "pebble:b", "--write-units", "-1"}, "--write-units -1"},
		{[]string{"migrate", "--from", "pebble:a", "--to", "pebble:b", "--page-items", "0"}, "--page-items 0"},
		{[]string{"migrate", "--from", "pebble:a"}, "required flag"},
		{[]string{"migrate", "--server", "http://127.0.0.1:1", "--from", "pebble:a", "--to", "pebble:b"}, "does not go through a server"},
	} {
		r := run(t, "", c.args...)
		require.Error(t, r.err, "%v", c.args)
		require.Equal(t, ExitUsage, ExitCode(r.err), "%v: %v", c.args, r.err)
		require.ErrorContains(t, r.err, c.want)
	}
	r := run(t, "", "migrate", "--from", "pebble:"+filepath.Join(t.TempDir(), "none"), "--to", "pebble:"+t.TempDir())
	require.ErrorContains(t, r.err, "no store in")
}
