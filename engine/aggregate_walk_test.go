package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// poisoned is a store whose iterators hand out every sort key, name and
// value read in place as a copy that they overwrite once it is no longer
// valid (Attrs returned, the iterator moved), as a store may reuse its
// buffers: a reader that keeps one sees the damage.
type poisoned struct{ storage.Store }

func (s poisoned) Query(ctx context.Context, q storage.Query) storage.Iterator {
	return &poisonedIterator{Iterator: s.Store.Query(ctx, q)}
}

type poisonedIterator struct {
	storage.Iterator
	sk []byte
}

func (it *poisonedIterator) Next() bool {
	poison(it.sk)
	return it.Iterator.Next()
}

func (it *poisonedIterator) SortKey() string {
	poison(it.sk)
	it.sk = []byte(it.Iterator.SortKey())
	return unsafe.String(unsafe.SliceData(it.sk), len(it.sk))
}

func (it *poisonedIterator) Attrs(fn func(name string, v any) bool) error {
	var bufs [][]byte
	defer func() {
		for _, b := range bufs {
			poison(b)
		}
	}()
	return it.Iterator.Attrs(func(name string, v any) bool {
		return fn(poisonable(&bufs, name), poisonableValue(&bufs, v))
	})
}

func poison(b []byte) {
	for i := range b {
		b[i] = 'X'
	}
}

// poisonable returns a copy of s whose bytes join bufs.
func poisonable(bufs *[][]byte, s string) string {
	b := []byte(s)
	*bufs = append(*bufs, b)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func poisonableValue(bufs *[][]byte, v any) any {
	switch v := v.(type) {
	case string:
		return poisonable(bufs, v)
	case json.Number:
		return json.Number(poisonable(bufs, string(v)))
	case []byte:
		b := slices.Clone(v)
		*bufs = append(*bufs, b)
		return b
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = poisonableValue(bufs, e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[poisonable(bufs, k)] = poisonableValue(bufs, e)
		}
		return out
	}
	return v
}

// Aggregates read items in place and keep nothing of the store's
// buffers: through a store that overwrites each view once it is no longer
// valid, every function gives the answer it gives through the store
// itself.
func TestAggregatesKeepNoViewOfTheStore(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].Shards = 2
		start := time.Date(2017, 4, 29, 0, 0, 0, 0, time.UTC) // across a month boundary
		clk := clock.NewManual(start)
		ctx := context.Background()
		plain, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { plain.Close() })
		rng := rand.New(rand.NewPCG(5, 6))
		var all []event.Event
		for day := range 3 {
			clk.Set(start.Add(time.Duration(day) * 24 * time.Hour))
			var batch []event.Event
			for range 80 {
				at := start.Add(time.Duration(day)*24*time.Hour + time.Duration(rng.IntN(24*3600))*time.Second)
				batch = append(batch, ev(at, fmt.Sprint("car-", rng.IntN(3)), map[string]any{
					"speed": num(rng.IntN(200)), "gear": []string{"P", "R", "N", "D"}[rng.IntN(4)], "odo": num(day*1000 + rng.IntN(1000)),
				}))
			}
			_, err := plain.Write(ctx, "acme", "t", batch)
			require.NoError(t, err)
			all = append(all, batch...)
		}
		// A retry on the first of May writes a day again, into May's table.
		clk.Set(time.Date(2017, 5, 1, 0, 30, 0, 0, time.UTC))
		_, err = plain.Write(ctx, "acme", "t", slices.Clone(all[80:160]))
		require.NoError(t, err)

		viewed, err := engine.Open(ctx, poisoned{store}, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { viewed.Close() })
		for _, series := range []string{"", "car-1"} {
			q := engine.AggregateQuery{Table: "t", Series: series, From: start, To: start.Add(3*24*time.Hour - 1), Bucket: 6 * time.Hour,
				Fields: []string{"speed", "gear", "odo"}, Funcs: []string{"count", "first", "last", "count_distinct"}}
			want, err := plain.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.NotEmpty(t, want)
			got, err := viewed.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.Equal(t, want, got, "series %q", series)

			q.Fields, q.Funcs = []string{"speed", "odo"}, []string{"sum", "min", "max", "avg", "p50", "delta", "rate"}
			want, err = plain.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			got, err = viewed.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.Equal(t, want, got, "series %q", series)
		}
	})
}
