package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
)

// `tenant limits` shows and sets a tenant's limits, on the store as
// through a server.
func TestTenantLimits(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	r := mustRun(t, "", "tenant", "limits", "acme", store)
	require.Equal(t, `LIMIT                    OVERRIDE  IN FORCE
write_events_per_second  -         100000
write_events_burst       -         200000
write_bytes_per_second   -         16777216
write_bytes_burst        -         33554432
max_concurrent_queries   -         16
max_query_partitions     -         16384
max_concurrent_writes    -         8
`, r.stdout)
	r = mustRun(t, "", "tenant", "limits", "acme", "--write-events-per-second", "500", "--max-concurrent-queries", "2", store)
	require.Contains(t, r.stdout, "write_events_per_second  500       500\n")
	r = mustRun(t, "", "tenant", "limits", "acme", "--write-events-burst", "1000", "--format", "json", store)
	var l api.Limits
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &l))
	require.Equal(t, api.TenantLimits{WriteEventsPerSecond: 500, WriteEventsBurst: 1000, MaxConcurrentQueries: 2}, l.Overrides, "flags change only their limits")
	r = run(t, "", "tenant", "limits", "acme", "--max-concurrent-queries", "-1", store)
	require.ErrorIs(t, r.err, api.ErrBadTenantLimits)
	r = run(t, "", "tenant", "limits", "acme", "--max-concurrent-queries", "many", store)
	require.Equal(t, ExitUsage, ExitCode(r.err))

	// Through the server, on the same store: the overrides are there,
	// and --reset clears them.
	url := serveStore(t, store)
	r = mustRun(t, "", "--server", url, "tenant", "limits", "acme", "--format", "json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &l))
	require.Equal(t, float64(500), l.Effective.WriteEventsPerSecond)
	require.Equal(t, 16<<20, int(l.Effective.WriteBytesPerSecond))
	r = mustRun(t, "", "--server", url, "tenant", "limits", "acme", "--reset", "--format", "json")
	l = api.Limits{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &l), r.stdout)
	require.Zero(t, l.Overrides)
	r = run(t, "", "--server", url, "tenant", "limits", "nobody")
	require.ErrorContains(t, r.err, "no such tenant")
}
