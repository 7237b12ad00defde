package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
)

func TestTimelineGrid(t *testing.T) {
	day := func(s string) time.Time {
		v, err := time.Parse("2006-01-02", s)
		require.NoError(t, err)
		return v
	}
	ts := []engine.TableStatus{
		{Family: "events", PeriodStart: day("2017-03-26"), WriteMonth: "2017-03", Tier: "cold"},
		{Family: "events", PeriodStart: day("2017-03-26"), WriteMonth: "2017-04", Tier: "cold"},
		{Family: "events", PeriodStart: day("2017-03-26"), WriteMonth: "2017-05", Tier: "hot"},
		{Family: "events", PeriodStart: day("2017-04-30"), WriteMonth: "2017-05", Tier: "warm"},
		{Family: "daily", PeriodStart: day("2017-05-02"), Tier: "hot"},
		{Family: "daily", PeriodStart: day("2017-05-01")},
	}
	var b strings.Builder
	require.NoError(t, writeTimeline(&b, ts))
	require.Equal(t, `
events: periods by write month
PERIOD START          2017-03  2017-04  2017-05
2017-03-26T00:00:00Z  c        c        h
2017-04-30T00:00:00Z  .        .        w

daily: periods by write month
PERIOD START          -
2017-05-01T00:00:00Z  ?
2017-05-02T00:00:00Z  h
`, b.String())
}

// TestTablesPhysicalColumn: the PHYSICAL column names the table a
// compaction rewrote a table into, "=" for a table of its own name; a
// rewrite that did not verify is said under the tables.
func TestTablesPhysicalColumn(t *testing.T) {
	ts := []engine.TableStatus{
		{Name: "tt_a", Physical: "tt_a", Family: "events", ItemCount: -1},
		{Name: "tt_b", Physical: "tt_b.r2", Family: "events", ItemCount: -1},
		{Name: "tt_c", Physical: "tt_c", Family: "events", ItemCount: -1, RewriteFailed: "1 rewrites into tt_c.r1 did not verify"},
	}
	var b strings.Builder
	require.NoError(t, writeTablesTable(&b, ts))
	lines := strings.Split(b.String(), "\n")
	require.Equal(t, []string{"NAME", "PHYSICAL", "FAMILY"}, strings.Fields(lines[0])[:3])
	require.Equal(t, []string{"tt_a", "=", "events"}, strings.Fields(lines[1])[:3])
	require.Equal(t, []string{"tt_b", "tt_b.r2", "events"}, strings.Fields(lines[2])[:3])
	require.Contains(t, b.String(), "\nrewrite failed: tt_c: 1 rewrites into tt_c.r1 did not verify\n")
}
