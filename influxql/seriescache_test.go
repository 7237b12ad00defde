package influxql_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
)

// The series cache serves a measurement's series until a series new to
// it is written through the same engine, which shows at once, or for its
// TTL, after which a series written through another engine on the same
// store shows too.
func TestSeriesCache(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	clk := clock.NewManual(at.Add(time.Hour))
	store, schema := backends.Pebble().Open(t)
	here, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, here.Close()) })
	other, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	cache := influxql.NewSeriesCache(5*time.Second, 0, clk.Now)

	write := func(db *engine.DB, series string) {
		t.Helper()
		_, err := db.Write(ctx, "acme", "m", []event.Event{{Time: at, Series: series, Fields: map[string]any{"v": json.Number("1")}}})
		require.NoError(t, err)
	}
	hosts := func() []any {
		t.Helper()
		stmts, err := influxql.Parse(`SHOW TAG VALUES FROM m WITH KEY = "host"`, nil)
		require.NoError(t, err)
		res, _ := influxql.Execute(ctx, here, "acme", stmts, influxql.Options{Database: "acme", Now: clk.Now(), Series: cache})
		require.Empty(t, res[0].Error)
		var out []any
		for _, s := range res[0].Series {
			for _, v := range s.Values {
				out = append(out, v[1])
			}
		}
		return out
	}
	write(here, "host=a")
	require.Equal(t, []any{"a"}, hosts())
	write(here, "host=a") // known: the listing still serves
	v := here.SeriesVersion("acme", "m")
	write(here, "host=b")
	require.NotEqual(t, v, here.SeriesVersion("acme", "m"), "a new series changes the version")
	require.Equal(t, []any{"a", "b"}, hosts(), "a series written here shows at once")

	write(other, "host=c")
	require.Equal(t, []any{"a", "b"}, hosts(), "another engine's series waits for the TTL")
	clk.Advance(5 * time.Second)
	require.Equal(t, []any{"a", "b", "c"}, hosts())
}
