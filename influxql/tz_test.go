package influxql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
)

// GROUP BY time() tz('zone') cuts buckets from the zone's midnight (or
// hour), 23 and 25 hours long across DST switches, with the same answer
// from the events and from rollups.
func TestTimeZoneBuckets(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	store, schema := backends.Pebble().Open(t)
	clk := clock.NewManual(now)
	rolled, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clk, Rollups: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rolled.Close()) })
	raw, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, raw.Close()) })

	// An event every 20 minutes, its value the count of 20 minutes
	// since 1970: a bucket [lo, hi) holds the values from lo to hi, so
	// its count, min, max and median follow from its bounds.
	const step = 20 * time.Minute
	for _, r := range [][2]string{{"2016-10-28T00:00:00Z", "2016-11-02T00:00:00Z"}, {"2017-03-24T00:00:00Z", "2017-03-29T00:00:00Z"}} {
		var events []event.Event
		for at := utc(t, r[0]); at.Before(utc(t, r[1])); at = at.Add(step) {
			events = append(events, event.Event{Time: at, Series: "site=x",
				Fields: map[string]any{"site": "x", "v": json.Number(strconv.FormatInt(at.Unix()/int64(step/time.Second), 10))}})
		}
		_, err := rolled.Write(ctx, "acme", "m", events)
		require.NoError(t, err)
	}
	// want is a bucket: the time InfluxDB answers for it and the UTC
	// bounds of its events.
	type want struct{ at, lo, hi string }
	// steps is the value of the first event at or after at.
	steps := func(at time.Time) int64 { return (at.Unix() + int64(step/time.Second) - 1) / int64(step/time.Second) }
	rows := func(ws ...want) [][]any {
		var out [][]any
		for _, w := range ws {
			a, b := steps(utc(t, w.lo)), steps(utc(t, w.hi))-1
			out = append(out, []any{w.at, fmt.Sprint(b - a + 1), fmt.Sprint(a), fmt.Sprint(b), strconv.FormatFloat(float64(a+b)/2, 'f', -1, 64)})
		}
		return out
	}
	for _, tc := range []struct {
		q       string
		rollups bool // whether count, min and max read rollups
		want    [][]any
	}{
		{"time >= '2017-03-25T00:00:00Z' AND time < '2017-03-28T00:00:00Z' GROUP BY time(1d) tz('Europe/Berlin')", true, rows(
			want{"2017-03-25T00:00:00+01:00", "2017-03-25T00:00:00Z", "2017-03-25T23:00:00Z"},
			want{"2017-03-26T00:00:00+01:00", "2017-03-25T23:00:00Z", "2017-03-26T22:00:00Z"}, // 23 hours
			want{"2017-03-27T00:00:00+02:00", "2017-03-26T22:00:00Z", "2017-03-27T22:00:00Z"},
			want{"2017-03-28T00:00:00+02:00", "2017-03-27T22:00:00Z", "2017-03-28T00:00:00Z"},
		)},
		{"time >= '2016-10-29T00:00:00Z' AND time < '2016-11-01T00:00:00Z' GROUP BY time(1d) tz('Europe/Berlin')", true, rows(
			want{"2016-10-29T00:00:00+02:00", "2016-10-29T00:00:00Z", "2016-10-29T22:00:00Z"},
			want{"2016-10-30T00:00:00+02:00", "2016-10-29T22:00:00Z", "2016-10-30T23:00:00Z"}, // 25 hours
			want{"2016-10-31T00:00:00+01:00", "2016-10-30T23:00:00Z", "2016-10-31T23:00:00Z"},
			want{"2016-11-01T00:00:00+01:00", "2016-10-31T23:00:00Z", "2016-11-01T00:00:00Z"},
		)},
		{"time >= '2017-03-25T23:00:00Z' AND time < '2017-03-26T22:00:00Z' GROUP BY time(12h) tz('Europe/Berlin')", true, rows(
			want{"2017-03-26T00:00:00+01:00", "2017-03-25T23:00:00Z", "2017-03-26T10:00:00Z"}, // 11 hours
			want{"2017-03-26T12:00:00+02:00", "2017-03-26T10:00:00Z", "2017-03-26T22:00:00Z"},
		)},
		{"time >= '2017-03-26T00:00:00Z' AND time < '2017-03-26T03:00:00Z' GROUP BY time(1h) tz('Europe/Berlin')", true, rows(
			want{"2017-03-26T01:00:00+01:00", "2017-03-26T00:00:00Z", "2017-03-26T01:00:00Z"},
			want{"2017-03-26T03:00:00+02:00", "2017-03-26T01:00:00Z", "2017-03-26T02:00:00Z"},
			want{"2017-03-26T04:00:00+02:00", "2017-03-26T02:00:00Z", "2017-03-26T03:00:00Z"},
		)},
		{"time >= '2017-03-24T00:00:00Z' AND time < '2017-03-24T02:00:00Z' GROUP BY time(1h) tz('Asia/Kolkata')", false, rows(
			want{"2017-03-24T05:00:00+05:30", "2017-03-24T00:00:00Z", "2017-03-24T00:30:00Z"},
			want{"2017-03-24T06:00:00+05:30", "2017-03-24T00:30:00Z", "2017-03-24T01:30:00Z"},
			want{"2017-03-24T07:00:00+05:30", "2017-03-24T01:30:00Z", "2017-03-24T02:00:00Z"},
		)},
		{"time >= '2016-11-01T00:00:00Z' AND time < '2016-11-02T00:00:00Z' GROUP BY time(1d, 6h) tz('America/New_York')", true, rows(
			want{"2016-10-31T06:00:00-04:00", "2016-11-01T00:00:00Z", "2016-11-01T10:00:00Z"},
			want{"2016-11-01T06:00:00-04:00", "2016-11-01T10:00:00Z", "2016-11-02T00:00:00Z"},
		)},
	} {
		// The median is a sketch, which rollups do not keep: it is asked
		// for apart, so that count, min and max may read them.
		for name, db := range map[string]*engine.DB{"rollups": rolled, "events": raw} {
			use := &rollupUse{DB: db}
			got := make([][]any, len(tc.want))
			for _, fns := range []string{"count(v), min(v), max(v)", "median(v)"} {
				q := "SELECT " + fns + " FROM m WHERE " + tc.q
				stmts, err := influxql.Parse(q, nil)
				require.NoError(t, err)
				use.used = nil
				res, _ := influxql.Execute(ctx, use, "acme", stmts, influxql.Options{Database: "acme", Now: now})
				require.Empty(t, res[0].Error, "%s: %s", name, q)
				require.Len(t, res[0].Series, 1, "%s: %s", name, q)
				require.Len(t, res[0].Series[0].Values, len(tc.want), "%s: %s", name, q)
				for i, r := range res[0].Series[0].Values {
					if got[i] == nil {
						got[i] = []any{r[0]}
					}
					require.Equal(t, got[i][0], r[0], "%s: %s", name, q)
					for _, v := range r[1:] {
						got[i] = append(got[i], fmt.Sprint(v))
					}
				}
				if name == "rollups" && fns != "median(v)" {
					require.NotEmpty(t, use.used, q)
					for _, u := range use.used {
						require.Equal(t, tc.rollups, u == "used", "%s: %s", u, q)
					}
				}
			}
			require.Equal(t, tc.want, got, "%s: %s", name, tc.q)
		}
	}
}

// rollupUse records whether each aggregate of a statement reads rollups.
type rollupUse struct {
	*engine.DB
	mu   sync.Mutex
	used []string
}

func (e *rollupUse) Aggregate(ctx context.Context, tenant string, q engine.AggregateQuery) ([]engine.Bucket, error) {
	e.mu.Lock()
	e.used = append(e.used, e.RollupUse(q))
	e.mu.Unlock()
	return e.DB.Aggregate(ctx, tenant, q)
}

func utc(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return at
}
