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
