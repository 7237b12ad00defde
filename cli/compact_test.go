package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompact(t *testing.T) {
	store, _ := seeded(t)
	wide := []string{"query", store, "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "json"}
	before := mustRun(t, "", wide...).stdout

	r := mustRun(t, "", "compact", store)
	dir := strings.TrimPrefix(store, "--store=")
	require.Regexp(t, "^"+regexp.QuoteMeta(dir)+`: \d+\.\d MiB, \d+\.\d MiB before compacting\n$`, r.stdout)
	require.Equal(t, before, mustRun(t, "", wide...).stdout, "the events read the same after compacting")
}

func TestCompactRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"dynamodb on disk", []string{"compact", "--store=dynamodb", "--chunks=false"}, 2},
		{"server", []string{"compact", "--server=http://127.0.0.1:1"}, 2},
		{"arguments", []string{"compact", "--store=pebble:" + t.TempDir(), "extra"}, 2},
		{"no store", []string{"compact", "--store=pebble:" + filepath.Join(t.TempDir(), "none")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, "", tt.args...)
			require.Error(t, r.err)
			require.Equal(t, tt.code, ExitCode(r.err), "%v", r.err)
		})
	}
}

// TestCompactPacksChunkTables writes events one request each into a
// family of the chunk layout: compact packs them (and says so), and the
// events read the same; --chunks=false leaves them be.
func TestCompactPacksChunkTables(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("families:\n  - name: events\n    layout: chunk\n    chunk_window: 1h\n"), 0o644))
	store := "--store=pebble:" + filepath.Join(dir, "data")
	flags := []string{store, "--config", cfg}
	mustRun(t, "", append([]string{"tenant", "add", "acme"}, flags...)...)
	lines, err := os.ReadFile(filepath.Join("testdata", "query", "events.ndjson"))
	require.NoError(t, err)
	for i, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		f := filepath.Join(dir, fmt.Sprintf("e%d.ndjson", i))
		require.NoError(t, os.WriteFile(f, []byte(line+"\n"), 0o644))
		mustRun(t, "", append([]string{"write", "--tenant", "acme", "--table", "a_table", f}, flags...)...)
	}
	wide := append([]string{"query", "--tenant", "acme", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "json"}, flags...)
	before := mustRun(t, "", wide...).stdout

	r := mustRun(t, "", append([]string{"compact", "--chunks=false"}, flags...)...)
	require.NotContains(t, r.stdout, "packed")
	r = mustRun(t, "", append([]string{"compact"}, flags...)...)
	require.Regexp(t, `: packed \d+ windows, \d+ chunk items written, [1-9]\d* items deleted\n`, r.stdout)
	require.Equal(t, before, mustRun(t, "", wide...).stdout, "the events read the same after packing")
	r = mustRun(t, "", append([]string{"compact"}, flags...)...)
	require.NotContains(t, r.stdout, "packed", "packed once")
}
