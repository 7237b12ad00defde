package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// longForm returns a chunk item as the writer of long sort keys stored
// it: the whole time key of its first event, the separator and the same
// content sum, and its chunk in the attribute tt_c.
func longForm(t *testing.T, it storage.Item) storage.Item {
	t.Helper()
	first, ok := chunk.FirstTime(it.SK)
	require.True(t, ok, it.SK)
	data, ok := chunk.Data(it)
	require.True(t, ok)
	attrs := map[string]any{chunk.AttrDataLong: data}
	if v, ok := it.Attrs[family.TTLAttribute]; ok {
		attrs[family.TTLAttribute] = v
	}
	return storage.Item{PK: it.PK, SK: itemenc.TimeKey(first) + `"` + it.SK[len(it.SK)-11:], Attrs: attrs}
}

// TestChunkLongKeysStillRead stores half of a chunk table's chunks in
// the form written before short sort keys (long keys, attribute tt_c),
// then writes chunks of the short form into the same windows, and
// requires every query and aggregate to answer as a table of rows does.
// On every backend.
func TestChunkLongKeysStillRead(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		rows := openLayout(t, b, family.LayoutRow, 1, apr10.Add(2*time.Hour))
		chunks := openLayout(t, b, family.LayoutChunk, 2, apr10.Add(2*time.Hour))
		evs := edgeEvents()
		_, err := rows.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)
		_, err = chunks.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)

		var names []string
		require.NoError(t, chunks.store.ListTables(ctx, chunks.prefix, func(name string) bool {
			names = append(names, name)
			return true
		}))
		long := 0
		for _, name := range names {
			var items []storage.Item
			it := chunks.store.Scan(ctx, name)
			for it.Next() {
				if chunk.IsSortKey(it.Item().SK) {
					items = append(items, it.Item())
				}
			}
			require.NoError(t, it.Close())
			for i, c := range items {
				require.Less(t, len(c.SK), itemenc.TimeKeyLen, "a new chunk's key is short: %q", c.SK)
				require.Contains(t, c.Attrs, chunk.AttrData)
				if i%2 == 1 {
					continue
				}
				require.NoError(t, chunks.store.BatchWrite(ctx, name, []storage.Item{longForm(t, c)}))
				require.NoError(t, chunks.store.BatchDelete(ctx, name, []storage.Key{{PK: c.PK, SK: c.SK}}))
				long++
			}
		}
		require.Positive(t, long)

		// Chunks of short keys beside the long ones, in their windows.
		more := append(slices.Clone(evs[:30]), event.Event{Time: apr10.Add(9 * time.Second), Series: "a", Fields: map[string]any{"v": json.Number("100")}},
			event.Event{Time: apr10.Add(59 * time.Minute), Series: "d", Fields: map[string]any{"v": json.Number("61")}})
		_, err = chunks.db.Write(ctx, "acme", "t", slices.Clone(more))
		require.NoError(t, err)
		_, err = rows.db.Write(ctx, "acme", "t", slices.Clone(more))
		require.NoError(t, err)

		var short, longs int
		for _, it := range tableItems(t, chunks.store, chunks.prefix) {
			switch {
			case !chunk.IsSortKey(it.SK):
			case strings.Contains(it.SK[:min(len(it.SK), itemenc.TimeKeyLen)], `"`):
				short++
			default:
				longs++
			}
		}
		require.Equal(t, long, longs)
		require.Positive(t, short)

		for i, q := range chunkQueries(t) {
			requireSamePages(t, pages(t, rows.db, q), pages(t, chunks.db, q), fmt.Sprintf("query %d", i))
		}
		from, to := apr10.Add(-time.Hour), apr10.Add(3*time.Hour)
		for i, q := range []engine.AggregateQuery{
			{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{engine.FnCount, engine.FnSum, engine.FnMin, engine.FnMax, engine.FnAvg, engine.FnFirst, engine.FnLast}},
			{Table: "t", Series: "d", From: from, To: to, Bucket: 10 * time.Minute, Fields: []string{"v"}, Funcs: []string{engine.FnSum, engine.FnP50}},
			{Table: "t", From: apr10.Add(30 * time.Minute), To: apr10.Add(90 * time.Minute), Bucket: time.Minute, Fields: []string{"v"}, Funcs: []string{engine.FnCount, engine.FnLast}},
		} {
			want, err := rows.db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			got, err := chunks.db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.Equal(t, want, got, "aggregate %d", i)
			require.NotEmpty(t, got)
		}
	})
}
