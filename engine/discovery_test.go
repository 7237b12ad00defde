package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestLogicalTableRange checks that a logical table records the times of
// its earliest and latest events, whatever order writes come in, and
// across engines on one store.
func TestLogicalTableRange(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		write := func(db *engine.DB, times ...time.Time) {
			t.Helper()
			var evs []event.Event
			for i, tm := range times {
				evs = append(evs, ev(tm, "s", map[string]any{"i": num(i)}))
			}
			_, err := db.Write(ctx, "acme", "cars", evs)
			require.NoError(t, err)
		}
		rangeIs := func(db *engine.DB, first, last time.Time) {
			t.Helper()
			tables, err := db.LogicalTables(ctx, "acme")
			require.NoError(t, err)
			require.Len(t, tables, 1)
			require.Equal(t, "cars", tables[0].Name)
			require.Equal(t, "events", tables[0].Family)
			require.Equal(t, apr10, tables[0].Created)
			require.Equal(t, first, tables[0].First, "first")
			require.Equal(t, last, tables[0].Last, "last")
		}
		write(f.db, apr10.Add(-time.Hour), apr10.Add(-2*time.Hour))
		rangeIs(f.db, apr10.Add(-2*time.Hour), apr10.Add(-time.Hour))
		write(f.db, apr10.Add(-90*time.Minute)) // inside: nothing to record
		rangeIs(f.db, apr10.Add(-2*time.Hour), apr10.Add(-time.Hour))
		write(f.db, apr10.Add(time.Nanosecond))
		rangeIs(f.db, apr10.Add(-2*time.Hour), apr10.Add(time.Nanosecond))

		// A second engine, which knows nothing in memory, extends both
		// ends; the first engine's later write of an earlier last and a
		// later first changes neither.
		other, err := engine.Open(ctx, f.store, engine.Options{Schema: f.db.Options().Schema, Clock: f.clock})
		require.NoError(t, err)
		defer other.Close()
		write(other, apr10.AddDate(0, 0, -20), apr10.Add(2*time.Minute))
		rangeIs(f.db, apr10.AddDate(0, 0, -20), apr10.Add(2*time.Minute))
		write(f.db, apr10.AddDate(0, 0, -10), apr10.Add(30*time.Second))
		rangeIs(other, apr10.AddDate(0, 0, -20), apr10.Add(2*time.Minute))
		write(f.db, apr10.AddDate(0, 0, -30))
		rangeIs(other, apr10.AddDate(0, 0, -30), apr10.Add(2*time.Minute))

		// Within a minute of the range it knows, an engine records nothing: events
		// in time order would otherwise update one item on every write.
		write(other, apr10.Add(2*time.Minute+50*time.Second), apr10.AddDate(0, 0, -30).Add(-30*time.Second))
		rangeIs(other, apr10.AddDate(0, 0, -30), apr10.Add(2*time.Minute))
		write(other, apr10.Add(3*time.Minute+time.Nanosecond))
		rangeIs(other, apr10.AddDate(0, 0, -30), apr10.Add(3*time.Minute+time.Nanosecond))
	})
}

// TestListSeries pages a table's series across physical tables, with a
// prefix, each series once.
func TestListSeries(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		var evs []event.Event
		var want []string
		for i := range 25 {
			s := fmt.Sprintf("car-%02d", i)
			want = append(want, s)
			// Every series in this week's table, odd ones also in
			// the week before's.
			evs = append(evs, ev(apr10, s, nil))
			if i%2 == 1 {
				evs = append(evs, ev(apr10.AddDate(0, 0, -7), s, nil))
			}
		}
		evs = append(evs, ev(apr10, "bus-1", nil))
		_, err := f.db.Write(ctx, "acme", "fleet", evs)
		require.NoError(t, err)

		var got []string
		after := ""
		for range 10 {
			page, err := f.db.ListSeries(ctx, "acme", "fleet", "car-", after, 4)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page.Series), 4)
			got = append(got, page.Series...)
			if page.Next == "" {
				break
			}
			after = page.Next
		}
		require.Equal(t, want, got)

		all, err := f.db.ListSeries(ctx, "acme", "fleet", "", "", 0)
		require.NoError(t, err)
		require.Equal(t, append([]string{"bus-1"}, want...), all.Series)
		require.Empty(t, all.Next)
		none, err := f.db.ListSeries(ctx, "acme", "fleet", "tram", "", 0)
		require.NoError(t, err)
		require.Equal(t, []string{}, none.Series)

		_, err = f.db.ListSeries(ctx, "globex", "fleet", "", "", 0)
		require.ErrorIs(t, err, engine.ErrUnknownTable)
		_, err = f.db.ListSeries(ctx, "acme", "fleet", "", "", engine.MaxSeriesLimit+1)
		require.ErrorIs(t, err, engine.ErrBadQuery)
	})
}
