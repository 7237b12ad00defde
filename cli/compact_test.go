package cli

import (
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
		{"dynamodb", []string{"compact", "--store=dynamodb"}, 2},
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
