package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// columnEvents returns generated events of a few series over two days:
// an integer field, a float field, a field of strings and numbers that
// comes and goes, events at one instant, and client ids now and then.
func columnEvents(r *rand.Rand, n int) []event.Event {
	evs := make([]event.Event, 0, n)
	for i := range n {
		at := apr10.Add(time.Duration(r.Int64N(int64(48 * time.Hour))))
		if r.IntN(20) == 0 && len(evs) > 0 {
			at = evs[r.IntN(len(evs))].Time // an instant another event has
		}
		fields := map[string]any{
			"i": json.Number(strconv.Itoa(r.IntN(2000) - 1000)),
			"f": json.Number(strconv.FormatFloat(float64(r.IntN(100000))/100-200, 'f', -1, 64)),
		}
		switch r.IntN(3) {
		case 0:
			fields["s"] = []string{"ok", "warn", "fail"}[r.IntN(3)]
		case 1:
			fields["f"] = json.Number("0.1") // a float whose sum is not the float's
		}
		ev := event.Event{Time: at, Series: fmt.Sprintf("s%d", r.IntN(4)), Fields: fields}
		if r.IntN(10) == 0 {
			ev.ID = fmt.Sprintf("c%d", i)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestAggregateColumnsAsEvents writes the same generated events to a
// chunk table and a row table, in requests that make several chunks per
// window (some whose times overlap, some that repeat events another
// request wrote, as a retry that joined other events does), and asks
// both the same aggregates: the chunk table's, folded from columns where
// it can, equal the row table's to the digit.
func TestAggregateColumnsAsEvents(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := apr10.Add(50 * time.Hour)
		chunks := openLayout(t, b, family.LayoutChunk, 2, now)
		rows := openLayout(t, b, family.LayoutRow, 2, now)
		r := rand.New(rand.NewPCG(39, 3))
		evs := columnEvents(r, 3000)
		slices.SortFunc(evs, func(a, b event.Event) int { return a.Time.Compare(b.Time) })
		retried := slices.Clone(evs[1000:1200])
		for len(evs) > 0 {
			if r.IntN(4) == 0 {
				// Requests over the same times: chunks that overlap.
				k := min(len(evs), 1+r.IntN(200))
				head := slices.Clone(evs[:k])
				r.Shuffle(len(head), func(i, j int) { head[i], head[j] = head[j], head[i] })
				for _, db := range []*engine.DB{chunks.db, rows.db} {
					_, err := db.Write(ctx, "acme", "t", slices.Clone(head[:k/2]))
					require.NoError(t, err)
				}
				evs = append(head[k/2:], evs[k:]...) // written below, with what follows
				slices.SortFunc(evs, func(a, b event.Event) int { return a.Time.Compare(b.Time) })
				if len(evs) == 0 {
					break
				}
			}
			n := min(len(evs), 1+r.IntN(300))
			batch := slices.Clone(evs[:n])
			if r.IntN(5) == 0 && n > 10 {
				// A retry that joined other events: the first ones again.
				for _, db := range []*engine.DB{chunks.db, rows.db} {
					_, err := db.Write(ctx, "acme", "t", slices.Clone(batch[:n/3]))
					require.NoError(t, err)
				}
			}
			for _, db := range []*engine.DB{chunks.db, rows.db} {
				_, err := db.Write(ctx, "acme", "t", slices.Clone(batch))
				require.NoError(t, err)
			}
			evs = evs[n:]
		}
		// A retry in May writes some of them again, into a table of
		// May's writes: the same chunks in two tables.
		for _, f := range []*fixture{chunks, rows} {
			f.clock.Set(time.Date(2017, 5, 1, 0, 30, 0, 0, time.UTC))
			_, err := f.db.Write(ctx, "acme", "t", slices.Clone(retried))
			require.NoError(t, err)
		}
		all := []string{engine.FnCount, engine.FnSum, engine.FnMin, engine.FnMax, engine.FnAvg}
		from, to := apr10.Add(17*time.Minute+time.Second), apr10.Add(47*time.Hour+3*time.Minute)
		queries := []engine.AggregateQuery{
			{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: []string{"i", "f"}, Funcs: all},
			{Table: "t", Series: "s1", From: from, To: to, Bucket: 10 * time.Minute, Fields: []string{"f", "i"}, Funcs: all},
			{Table: "t", Series: "s2", From: apr10, To: apr10.Add(48 * time.Hour), Bucket: 6 * time.Hour, Offset: 25 * time.Minute, Fields: []string{"i"}, Funcs: all},
			{Table: "t", From: from, To: to, Bucket: 24 * time.Hour, Funcs: []string{engine.FnCount}},
			{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: []string{"s", "i"}, Funcs: []string{engine.FnCount, engine.FnCountDistinct}, Fill: true},
			{Table: "t", From: from, To: to, Bucket: 2 * time.Hour, Fields: []string{"f", "i"}, Funcs: []string{engine.FnP50, engine.FnStddev, engine.FnDelta, engine.FnMedian}},
			{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: []string{"f"}, Funcs: []string{engine.FnFirst, engine.FnLast, engine.FnSum}},
			{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: []string{"i"}, Funcs: all, Filter: &storage.Filter{Op: storage.FilterEq, Attr: "s", Value: "ok"}},
		}
		for i, q := range queries {
			want, err := rows.db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			got, err := chunks.db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.NotEmpty(t, want)
			require.Equal(t, want, got, "aggregate %d", i)
		}
		q := queries[0]
		q.GroupBy = engine.GroupBySeries
		want, err := rows.db.AggregateGroups(ctx, "acme", q)
		require.NoError(t, err)
		got, err := chunks.db.AggregateGroups(ctx, "acme", q)
		require.NoError(t, err)
		require.Equal(t, want, got, "grouped by series")
		// One series: which string an answer of every series names
		// depends on the order its workers' summaries merge in.
		q = engine.AggregateQuery{Table: "t", Series: "s1", From: from, To: to, Bucket: time.Hour, Fields: []string{"s"}, Funcs: []string{engine.FnSum}}
		_, werr := rows.db.Aggregate(ctx, "acme", q)
		_, gerr := chunks.db.Aggregate(ctx, "acme", q)
		require.ErrorIs(t, werr, engine.ErrBadQuery)
		require.Equal(t, werr.Error(), gerr.Error(), "the sum of strings refused alike")
	})
}
