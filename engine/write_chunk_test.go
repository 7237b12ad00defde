package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// A chunk-layout request written through WriteBatch, which tells no
// caller the ids and so keys no event without a client id that goes
// into a chunk, reads back as through Write: the same events, each once,
// with the same ids; an event too large to be a chunk alone is one row
// under the id its row has through Write.
func TestChunkWriteBatchAsWrite(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		now := apr10.Add(2 * time.Hour)
		viaWrite := openLayout(t, b, family.LayoutChunk, 3, now)
		viaBatch := openLayout(t, b, family.LayoutChunk, 3, now)

		var evs []event.Event
		for i := range 90 {
			e := ev(apr10.Add(time.Duration(i/3)*time.Minute), fmt.Sprintf("s%d", i%3), map[string]any{"i": num(i % 7), "s": "ok"})
			if i%10 == 4 {
				e.ID = fmt.Sprintf("client-%d", i)
			}
			evs = append(evs, e)
		}
		evs = append(evs, evs[5], evs[33]) // repeats
		// Of one instant and series, no ids, other fields: two events.
		evs = append(evs, ev(apr10, "s0", map[string]any{"i": num(100)}))

		// An event whose row fits an item and whose chunk does not: random
		// bytes, a little over what a chunk alone holds.
		r := rand.New(rand.NewPCG(1, 2))
		blob := func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return b
		}
		big := ev(apr10.Add(30*time.Second), "s1", nil)
		// A client id as long as a generated one: without one, short chunk
		// keys make the chunk of an incompressible event smaller than its
		// row.
		big.ID = strings.Repeat("i", 11)
		for n := storage.MaxItemSize - 200; n < storage.MaxItemSize; n++ {
			big.Fields = map[string]any{"blob": blob(n)}
			if _, alone, err := chunk.Pack(chunk.Series{Tenant: "acme", Table: "t", Series: "s1", Shards: 3}, time.Hour, []event.Event{big}); err == nil && len(alone) == 1 {
				break
			}
		}
		evs = append(evs, big) // a client id names one event of a request

		_, err := viaWrite.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)
		batch, err := event.Check(slices.Clone(evs), viaBatch.db.Options().Limits, now)
		require.NoError(t, err)
		n, err := viaBatch.db.WriteBatch(ctx, "acme", "t", batch)
		require.NoError(t, err)
		require.Equal(t, len(evs), n)

		q := engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Hour), Limit: 1000}
		want := queryAll(t, viaWrite.db, "acme", q)
		got := queryAll(t, viaBatch.db, "acme", q)
		require.Len(t, want, 90+1+1, "each event once")
		require.Equal(t, want, got)

		rows := 0
		for _, it := range tableItems(t, viaBatch.store, viaBatch.prefix) {
			if _, ok := it.Attrs["blob"]; ok {
				rows++
			}
		}
		require.Equal(t, 1, rows, "the large event is one row")
	})
}
