package engine_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// seriesReads counts the items its queries return of one series'
// partitions: the event items a read takes from the store.
type seriesReads struct {
	storage.Store
	series string
	items  *atomic.Int64
}

func (s seriesReads) Query(ctx context.Context, q storage.Query) storage.Iterator {
	it := s.Store.Query(ctx, q)
	if _, _, series, _, err := itemenc.ParsePartitionKey(q.PK); err != nil || series != s.series {
		return it
	}
	return &seriesReadsIterator{Iterator: it, items: s.items}
}

type seriesReadsIterator struct {
	storage.Iterator
	items *atomic.Int64
}

func (it *seriesReadsIterator) Next() bool {
	ok := it.Iterator.Next()
	if ok {
		it.items.Add(1)
	}
	return ok
}

// TestLatestReadsTheNewestChunk asks for a series' latest 10 events in
// a chunk table of one shard: when the newest window's one chunk holds
// them, the read takes that one item from the store, and more only when
// the window holds fewer or more chunks; the events are the row
// layout's.
func TestLatestReadsTheNewestChunk(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := apr10.Add(3 * time.Hour)
		inner, cfg := b.Open(t)
		cfg.Families[0].Layout, cfg.Families[0].ChunkWindow, cfg.Families[0].Shards = family.LayoutChunk, time.Hour, 1
		var items atomic.Int64
		db, err := engine.Open(ctx, seriesReads{Store: inner, series: "car", items: &items}, engine.Options{Schema: cfg, Clock: clock.NewManual(now)})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		rows := openLayout(t, b, family.LayoutRow, 1, now)
		write := func(from time.Duration, n int) {
			t.Helper()
			var evs []event.Event
			for i := range n {
				at := apr10.Add(from + time.Duration(i)*time.Minute)
				evs = append(evs, event.Event{Time: at, Series: "car", Fields: map[string]any{"v": num(i)}})
			}
			for _, d := range []*engine.DB{db, rows.db} {
				_, err := d.Write(ctx, "acme", "t", slices.Clone(evs))
				require.NoError(t, err)
			}
		}
		latest := func(what string, want int64) {
			t.Helper()
			q := engine.Query{Table: "t", Series: "car", From: apr10.Add(-24 * time.Hour), To: now, Desc: true, Limit: 10}
			items.Store(0)
			got, err := db.Query(ctx, "acme", q)
			require.NoError(t, err)
			read := items.Load()
			wantPage, err := rows.db.Query(ctx, "acme", q)
			require.NoError(t, err)
			require.Len(t, got.Events, 10, what)
			require.Equal(t, wantPage.Events, got.Events, what)
			require.Equal(t, want, read, "%s: items read", what)
		}
		write(0, 50)         // 12:00 to 12:49, one chunk
		write(time.Hour, 40) // 13:00 to 13:39, one chunk
		latest("the newest window one chunk", 1)
		write(time.Hour+45*time.Minute, 5) // 13:45 to 13:49, a second chunk
		latest("the newest window two chunks", 2)
		write(2*time.Hour, 3) // 14:00 to 14:02: too few
		latest("the newest window too few events", 3)
	})
}
