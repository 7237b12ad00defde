package chunk_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// TestStoresKeepChunks writes chunk items to every backend, one of them
// within a few hundred bytes of 400 KB as storage.ItemSize counts it, so
// that DynamoDB's own count accepts what Pack sized, and reads them back
// by a key range of times, beside a row of the same partition, as the
// items written.
func TestStoresKeepChunks(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			table := cfg.Families[0].Prefix + "chunks"
			require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: table}))

			s := chunk.Series{Tenant: "acme", Table: "cars", Series: "car#17", Shards: 1}
			from := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
			r := rand.New(rand.NewPCG(9, 9))
			blob := make([]byte, 30_000)
			var evs []event.Event
			for i := range 26 {
				for j := range blob {
					blob[j] = byte(r.Uint32())
				}
				evs = append(evs, event.Event{Time: from.Add(time.Duration(i) * time.Second), Series: s.Series, Fields: map[string]any{
					"blob": slices.Clone(blob), "s": "nul\x00", "n": json.Number("1.5"),
				}})
			}
			items, alone, err := chunk.Pack(s, time.Hour, evs)
			require.NoError(t, err)
			require.Empty(t, alone)
			require.Len(t, items, 2)
			largest := 0
			for _, it := range items {
				largest = max(largest, storage.ItemSize(it))
			}
			require.Greater(t, largest, storage.MaxItemSize-25_000, "an item near the limit")

			row := itemenc.RowItem(s.Tenant, s.Table, event.Event{Time: from, Series: s.Series, ID: "row", Fields: map[string]any{"v": "x"}}, 0)
			require.NoError(t, store.BatchWrite(ctx, table, append(slices.Clone(items), row)))

			it := store.Query(ctx, storage.Query{Table: table, PK: items[0].PK, Low: chunk.LowKey(from, time.Hour), High: itemenc.HighKey(from.Add(time.Hour))})
			var got []event.Event
			rows := 0
			for it.Next() {
				item := it.Item()
				if !chunk.IsSortKey(item.SK) {
					rows++
					continue
				}
				got, err = chunk.Unpack(got, item)
				require.NoError(t, err)
			}
			require.NoError(t, it.Err())
			it.Close()
			require.Equal(t, 1, rows)
			require.Len(t, got, len(evs))
			for i := range evs {
				require.True(t, evs[i].Time.Equal(got[i].Time))
				require.Equal(t, evs[i].Fields, got[i].Fields)
				require.Equal(t, s.Series, got[i].Series)
			}
		})
	}
}
