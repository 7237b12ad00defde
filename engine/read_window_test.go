package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/internal/backends"
)

// overlappingRequests returns requests of events of three series whose
// chunks overlap: each request's events lie in a minute starting
// anywhere in a window's first ten minutes (a few in the windows
// around it), many at one instant (hot), some with client ids, and a
// third of them repeats of earlier requests' events (a request names
// an event once), so that windows
// hold the same event in several chunks. No two events share a time
// and client id unless they are one event, so the row layout, which
// keeps the last write of a key, keeps what the chunk layout does.
func overlappingRequests(r *rand.Rand, n int, hot time.Time) [][]event.Event {
	var all []event.Event
	var reqs [][]event.Event
	made := 0
	for range n {
		start := apr10.Add(time.Duration(r.IntN(540)) * time.Second)
		var req []event.Event
		earlier, picked := len(all), map[int]bool{}
		for range 5 + r.IntN(25) {
			if k := r.IntN(max(earlier, 1)); earlier > 0 && r.IntN(3) == 0 && !picked[k] {
				picked[k] = true
				req = append(req, all[k]) // a repeat of an earlier request's event
				continue
			}
			made++
			at := start.Add(time.Duration(r.IntN(60_000)) * time.Millisecond)
			switch r.IntN(10) {
			case 0, 1:
				at = hot
			case 2:
				at = at.Add(time.Hour)
			case 3:
				at = at.Add(-time.Hour + time.Duration(r.IntN(1000)))
			}
			e := ev(at, fmt.Sprintf("s%d", r.IntN(3)), map[string]any{"v": num(made % 50), "k": fmt.Sprint("x", made%3)})
			if r.IntN(4) == 0 {
				e.ID = fmt.Sprintf("c%d", made)
			}
			if r.IntN(10) == 0 {
				e.Fields = map[string]any{"v": num(7)} // the same content as others at its time
			}
			all = append(all, e)
			req = append(req, e)
		}
		reqs = append(reqs, req)
	}
	return reqs
}

// TestLazyWindowReads writes requests whose chunks overlap in their
// windows (repeats across chunks, many events at one instant, client
// ids) to a table of the chunk layout, the last of them as rows beside
// its chunks, and to one of the row layout, and requires every read to
// be the same, page by page: each order, small pages whose cursors
// resume inside chunks, one series and all, ranges cut inside a
// window, one instant, a series' latest events, filters and
// projections. A window is decoded lazily (read_window.go); the row
// layout decodes nothing lazily. On every backend.
func TestLazyWindowReads(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := apr10.Add(3 * time.Hour)
		hot := apr10.Add(5*time.Minute + 7*time.Millisecond)
		reqs := overlappingRequests(rand.New(rand.NewPCG(7, 11)), 24, hot)
		rows := openLayout(t, b, family.LayoutRow, 1, now)
		for _, req := range reqs {
			_, err := rows.db.Write(ctx, "acme", "t", slices.Clone(req))
			require.NoError(t, err)
		}
		// The chunk table takes rows once its family turns to the row
		// layout.
		store, cfg := b.Open(t)
		reopen := func(kind family.Layout) *engine.DB {
			c := cfg
			c.Families = slices.Clone(cfg.Families)
			c.Families[0].Layout, c.Families[0].ChunkWindow, c.Families[0].Shards = kind, time.Hour, 2
			db, err := engine.Open(ctx, store, engine.Options{Schema: c, Clock: rows.clock})
			require.NoError(t, err)
			return db
		}
		db := reopen(family.LayoutChunk)
		for _, req := range reqs[:20] {
			_, err := db.Write(ctx, "acme", "t", slices.Clone(req))
			require.NoError(t, err)
		}
		require.NoError(t, db.Close())
		db = reopen(family.LayoutRow)
		t.Cleanup(func() { db.Close() })
		for _, req := range reqs[20:] {
			_, err := db.Write(ctx, "acme", "t", slices.Clone(req))
			require.NoError(t, err)
		}

		big, err := filter.Parse(`v > 20`)
		require.NoError(t, err)
		x1, err := filter.Parse(`k = "x1"`)
		require.NoError(t, err)
		from, to := apr10.Add(-2*time.Hour), apr10.Add(3*time.Hour)
		var queries []engine.Query
		for _, desc := range []bool{false, true} {
			queries = append(queries,
				engine.Query{Table: "t", From: from, To: to, Desc: desc, Limit: 1000},
				engine.Query{Table: "t", From: from, To: to, Desc: desc, Limit: 17},
				engine.Query{Table: "t", Series: "s1", From: from, To: to, Desc: desc, Limit: 3},
				engine.Query{Table: "t", Series: "s2", From: apr10.Add(100 * time.Second), To: hot, Desc: desc, Limit: 4},
				engine.Query{Table: "t", From: hot.Add(-30 * time.Second), To: hot.Add(time.Minute), Desc: desc, Limit: 9},
				engine.Query{Table: "t", Series: "s0", From: hot, To: hot, Desc: desc, Limit: 2},
				engine.Query{Table: "t", From: hot, To: hot, Desc: desc, Limit: 1},
				engine.Query{Table: "t", From: from, To: to, Desc: desc, Limit: 13, Filter: big},
				engine.Query{Table: "t", Series: "s1", From: from, To: to, Desc: desc, Limit: 5, Filter: x1, Fields: []string{"v"}},
				engine.Query{Table: "t", From: from, To: to, Desc: desc, Limit: 100, Fields: []string{"k"}},
			)
		}
		queries = append(queries, engine.Query{Table: "t", Series: "s2", From: now.Add(-3 * time.Hour), To: now, Desc: true, Limit: 10})
		for i, q := range queries {
			requireSamePages(t, pages(t, rows.db, q), pages(t, db, q), fmt.Sprintf("query %d %+v", i, q))
		}
		all := queryAll(t, db, "acme", engine.Query{Table: "t", From: from, To: to})
		require.Equal(t, len(queryAll(t, rows.db, "acme", engine.Query{Table: "t", From: from, To: to})), len(all))
		atHot := queryAll(t, db, "acme", engine.Query{Table: "t", From: hot, To: hot})
		require.Greater(t, len(atHot), 20, "many events at one instant")
	})
}
