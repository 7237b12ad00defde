package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// rollupFixture holds two engines on one store: on keeps rollups, raw
// does not and answers from raw events.
type rollupFixture struct {
	*fixture
	raw *engine.DB
}

func openRollups(t *testing.T, b backends.Backend, now time.Time) rollupFixture {
	t.Helper()
	return openRollupsIn(t, b, now, family.LayoutRow)
}

// openRollupsIn is openRollups for a family of the given layout.
func openRollupsIn(t *testing.T, b backends.Backend, now time.Time, layout family.Layout) rollupFixture {
	t.Helper()
	store, cfg := b.Open(t)
	cfg.Families[0].Layout = layout
	clk := clock.NewManual(now)
	ctx := context.Background()
	on, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, Rollups: true})
	require.NoError(t, err)
	t.Cleanup(func() { on.Close() })
	raw, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	return rollupFixture{fixture: &fixture{prefix: cfg.Families[0].Prefix, db: on, store: store, clock: clk}, raw: raw}
}

// rollupItems returns the rollup items of every table of the fixture, by
// table, partition and sort key.
func rollupItems(t *testing.T, f rollupFixture) map[string]storage.Item {
	t.Helper()
	ctx := context.Background()
	var tables []string
	require.NoError(t, f.store.ListTables(ctx, f.prefix, func(name string) bool {
		if !strings.HasPrefix(name, f.prefix) {
			return false
		}
		tables = append(tables, name)
		return true
	}))
	out := map[string]storage.Item{}
	for _, name := range tables {
		it := f.store.Scan(ctx, name)
		for it.Next() {
			item := it.Item()
			if strings.Contains(item.PK, "#~r") {
				out[name+" "+item.PK+" "+item.SK] = item
			}
		}
		require.NoError(t, it.Err())
		it.Close()
	}
	return out
}

func requireSameBuckets(t *testing.T, want, got []engine.Bucket) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w.Start, g.Start)
		require.Equal(t, w.End, g.End)
		require.Equal(t, w.Partial, g.Partial)
		require.Equal(t, w.Events, g.Events, "bucket %s", w.Start)
		require.Len(t, g.Values, len(w.Values), "bucket %s", w.Start)
		for field, wv := range w.Values {
			gv := g.Values[field]
			require.Len(t, gv, len(wv))
			for fn, x := range wv {
				require.Equal(t, x, gv[fn], "%s %s of bucket %s", fn, field, w.Start)
			}
		}
	}
}

// rollupStart is a Friday: three days cross a weekly table boundary.
var rollupStart = time.Date(2017, 4, 28, 0, 0, 0, 0, time.UTC)

// writeRandom writes a few events a day for three days over three series,
// each day's at that day's clock, and leaves the clock a day after.
func writeRandom(t *testing.T, f rollupFixture, seed uint64) []event.Event {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	var all []event.Event
	for day := range 3 {
		dayStart := rollupStart.Add(time.Duration(day) * 24 * time.Hour)
		f.clock.Set(dayStart.Add(23 * time.Hour))
		var batch []event.Event
		for range 40 {
			at := dayStart.Add(time.Duration(rng.IntN(24*3600)) * time.Second)
			fields := map[string]any{"speed": json.Number(fmt.Sprintf("%d.%d", rng.IntN(200), rng.IntN(10))), "gear": []string{"P", "D", "N"}[rng.IntN(3)]}
			if rng.IntN(4) == 0 {
				delete(fields, "speed")
			}
			batch = append(batch, ev(at, fmt.Sprint("car-", rng.IntN(3)), fields))
		}
		_, err := f.db.Write(context.Background(), "acme", "t", batch)
		require.NoError(t, err)
		all = append(all, batch...)
	}
	f.clock.Set(rollupStart.Add(4 * 24 * time.Hour))
	return all
}

var speedQuery = engine.AggregateQuery{
	Table: "t", Fields: []string{"speed"},
	Funcs: []string{"count", "sum", "min", "max", "avg", "first", "last"},
}

func TestRollupsAgreeWithRawEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := openRollups(t, b, rollupStart)
		ctx := context.Background()
		writeRandom(t, f, 3)
		queries := map[string]engine.AggregateQuery{}
		for _, bucket := range []time.Duration{time.Hour, 3 * time.Hour, 24 * time.Hour} {
			for _, edges := range []struct{ from, to time.Time }{
				{rollupStart, rollupStart.Add(3*24*time.Hour - time.Nanosecond)},
				{rollupStart.Add(90 * time.Minute), rollupStart.Add(2*24*time.Hour + 30*time.Minute)},
			} {
				q := speedQuery
				q.From, q.To, q.Bucket = edges.from, edges.to, bucket
				queries[fmt.Sprintf("speed %s from %s", bucket, edges.from.Format(time.Kitchen))] = q
				q.Fields, q.Funcs, q.Series = []string{"gear"}, []string{"count", "first", "last"}, "car-1"
				queries[fmt.Sprintf("gear of car-1 %s from %s", bucket, edges.from.Format(time.Kitchen))] = q
			}
		}
		// Buckets offset by whole hours are summed from hourly rollups.
		for _, off := range []struct{ bucket, offset time.Duration }{{3 * time.Hour, time.Hour}, {24 * time.Hour, 5 * time.Hour}} {
			q := speedQuery
			q.From, q.To, q.Bucket, q.Offset = rollupStart.Add(90*time.Minute), rollupStart.Add(2*24*time.Hour+30*time.Minute), off.bucket, off.offset
			require.Equal(t, "used", f.db.RollupUse(q))
			queries[fmt.Sprintf("speed %s offset %s", off.bucket, off.offset)] = q
		}
		for range 2 { // computed, then read from the stored rollups
			for name, q := range queries {
				want, err := f.raw.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				require.NotEmpty(t, want)
				got, err := f.db.Aggregate(ctx, "acme", q)
				require.NoError(t, err, name)
				requireSameBuckets(t, want, got)
			}
			require.NotEmpty(t, rollupItems(t, f))
		}
	})
}

// Rollups of a table of chunks are those of its events: computed from
// chunks, then read back, they answer as the chunks' events do.
func TestRollupsOfChunksAgreeWithRawEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := openRollupsIn(t, b, rollupStart, family.LayoutChunk)
		ctx := context.Background()
		writeRandom(t, f, 7)
		for range 2 { // computed, then read from the stored rollups
			for _, bucket := range []time.Duration{time.Hour, 24 * time.Hour} {
				q := speedQuery
				q.From, q.To, q.Bucket = rollupStart.Add(90*time.Minute), rollupStart.Add(2*24*time.Hour+30*time.Minute), bucket
				require.Equal(t, "used", f.db.RollupUse(q))
				want, err := f.raw.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				require.NotEmpty(t, want)
				got, err := f.db.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				requireSameBuckets(t, want, got)
			}
			require.NotEmpty(t, rollupItems(t, f))
		}
	})
}

func TestRollupsStayExactUnderRetriesAndLateData(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := openRollups(t, b, rollupStart)
		ctx := context.Background()
		all := writeRandom(t, f, 5)
		q := speedQuery
		q.From, q.To, q.Bucket = rollupStart, rollupStart.Add(3*24*time.Hour-time.Nanosecond), time.Hour
		before, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		stored := rollupItems(t, f)

		// A retry of the whole first day writes new markers: every rollup
		// of that day is recomputed, and the answer does not change.
		f.clock.Advance(time.Hour)
		_, err = f.db.Write(ctx, "acme", "t", append([]event.Event(nil), all[:40]...))
		require.NoError(t, err)
		f.clock.Advance(time.Hour)
		got, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		requireSameBuckets(t, before, got)
		retried := rollupItems(t, f)
		changed := 0
		for k, item := range retried {
			if fmt.Sprint(item.Attrs["covered"]) != fmt.Sprint(stored[k].Attrs["covered"]) {
				changed++
			}
		}
		require.Positive(t, changed)

		// A late event into an old hour changes that hour by exactly it,
		// and only that series' rollup of that hour is written again.
		hour := rollupStart.Add(30 * time.Hour)
		late := ev(hour.Add(17*time.Minute), "car-2", map[string]any{"speed": num(1000)})
		f.clock.Advance(time.Hour)
		_, err = f.db.Write(ctx, "acme", "t", []event.Event{late})
		require.NoError(t, err)
		f.clock.Advance(time.Hour)
		after, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		want, err := f.raw.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		requireSameBuckets(t, want, after)
		require.Len(t, after, len(before))
		for i := range before {
			if !before[i].Start.Equal(hour) {
				requireSameBuckets(t, before[i:i+1], after[i:i+1])
				continue
			}
			require.Equal(t, before[i].Events+1, after[i].Events)
			require.Equal(t, before[i].Values["speed"]["count"].(int64)+1, after[i].Values["speed"]["count"])
			sum := ratOf(t, before[i].Values["speed"]["sum"])
			require.Equal(t, decimalText(sum.Add(sum, big.NewRat(1000, 1))), after[i].Values["speed"]["sum"])
			require.Equal(t, json.Number("1000"), after[i].Values["speed"]["max"])
		}
		var rewritten []string
		for k, item := range rollupItems(t, f) {
			if fmt.Sprint(item.Attrs) != fmt.Sprint(retried[k].Attrs) {
				rewritten = append(rewritten, k)
			}
		}
		require.Len(t, rewritten, 1)
		require.Contains(t, rewritten[0], "#car-2#~rhour "+hour.Format("2006-01-02T15:04:05.000000000Z"))
	})
}

func TestRollupsRefuseNonNumericSums(t *testing.T) {
	f := openRollups(t, backends.Pebble(), rollupStart)
	ctx := context.Background()
	writeRandom(t, f, 9)
	q := engine.AggregateQuery{Table: "t", From: rollupStart, To: rollupStart.Add(24*time.Hour - 1), Bucket: time.Hour, Fields: []string{"gear"}, Funcs: []string{"sum"}}
	for range 2 { // computed, then from stored rollups
		_, err := f.db.Aggregate(ctx, "acme", q)
		require.ErrorIs(t, err, engine.ErrBadQuery)
		require.ErrorContains(t, err, `field "gear" holds a value that is not a number`)
	}
	require.NotEmpty(t, rollupItems(t, f))
}

func TestRollupsWaitForTheSettleWindow(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := openRollups(t, b, rollupStart)
		ctx := context.Background()
		writeRandom(t, f, 11)
		// One more write, just now, into the first hour of the range.
		_, err := f.db.Write(ctx, "acme", "t", []event.Event{ev(rollupStart.Add(time.Minute), "car-0", map[string]any{"speed": num(7)})})
		require.NoError(t, err)
		q := speedQuery
		q.From, q.To, q.Bucket = rollupStart, rollupStart.Add(2*time.Hour-1), time.Hour
		want, err := f.raw.Aggregate(ctx, "acme", q)
		require.NoError(t, err)

		got, err := f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		requireSameBuckets(t, want, got)
		for k := range rollupItems(t, f) {
			require.NotContains(t, k, "#car-0#~rhour "+rollupStart.Format("2006-01-02T15:04:05.000000000Z"), "stored before its markers settled")
		}
		require.NotEmpty(t, rollupItems(t, f), "the other series' hours are settled")

		f.clock.Advance(16 * time.Minute)
		got, err = f.db.Aggregate(ctx, "acme", q)
		require.NoError(t, err)
		requireSameBuckets(t, want, got)
		found := 0
		for k := range rollupItems(t, f) {
			if strings.HasSuffix(k, " acme#t#car-0#~rhour "+rollupStart.Format("2006-01-02T15:04:05.000000000Z")) {
				found++
			}
		}
		require.Equal(t, 1, found, "stored once its markers settled")
	})
}
