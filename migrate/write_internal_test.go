package migrate

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// recorder is a target that records when each write was made, and of
// how many items and write units, and stores nothing.
type recorder struct {
	Store
	mu     sync.Mutex
	writes []write
}

type write struct {
	at           time.Time
	units, items int
}

func (r *recorder) BatchWrite(_ context.Context, _ string, items []storage.Item) error {
	w := write{at: time.Now(), items: len(items)}
	for _, it := range items {
		w.units += storage.WriteUnits(storage.ItemSize(it))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, w)
	return nil
}

// TestWriteUnits checks that a budget of write units holds a page's
// writes to its rate, on the fake clock of a synctest bubble: never more
// units than the budget's second of burst and its rate since the start,
// sent a BatchWriteItem's 25 items at a time, items of several KiB
// counted as several units.
func TestWriteUnits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		const budget = 40
		m, err := New(nil, rec, Options{MetaTable: "m", WriteUnits: budget})
		require.NoError(t, err)
		var page []storage.Item
		for i := range 300 {
			it := storage.Item{PK: fmt.Sprint("p", i), SK: "s", Attrs: map[string]any{}}
			if i%10 == 0 {
				it.Attrs["big"] = string(make([]byte, 3000)) // 3 units
			}
			page = append(page, it)
		}
		start := time.Now()
		require.NoError(t, m.write(t.Context(), "t", page))
		var units, items int
		for _, w := range rec.writes {
			require.LessOrEqual(t, w.items, batchItems)
			units += w.units
			items += w.items
			// A unit of slack: the limiter rounds its waits to whole
			// nanoseconds.
			require.LessOrEqual(t, float64(units), budget+budget*w.at.Sub(start).Seconds()+1, "units written by %v", w.at.Sub(start))
		}
		require.Equal(t, 300, items)
		require.Equal(t, 270+30*3, units)
		require.GreaterOrEqual(t, time.Since(start), time.Duration(float64(units-budget)/budget*float64(time.Second)))
	})
}
