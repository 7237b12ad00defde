package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// indexGate is a store that counts the batch writes of series index
// entries, and holds the first until release is closed, failing it then
// when fail is set. held is closed once the first is held; later ones
// are announced on later.
type indexGate struct {
	storage.Store
	writes  atomic.Int64
	held    chan struct{}
	later   chan struct{}
	release chan struct{}
	fail    bool
}

func newIndexGate(s storage.Store, fail bool) *indexGate {
	return &indexGate{Store: s, held: make(chan struct{}), later: make(chan struct{}, 16), release: make(chan struct{}), fail: fail}
}

func (g *indexGate) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if len(items) == 0 || !strings.HasPrefix(items[0].SK, "s:") {
		return g.Store.BatchWrite(ctx, table, items)
	}
	if g.writes.Add(1) == 1 {
		close(g.held)
		<-g.release
		if g.fail {
			return &storage.BatchWriteError{Table: table, Unwritten: []int{0}, Err: errInjected}
		}
	} else {
		g.later <- struct{}{}
	}
	return g.Store.BatchWrite(ctx, table, items)
}

// TestConcurrentWritersShareIndexWrites starts writers of the same new
// series while the first one's series index write is held: the others
// must wait for it rather than write the entries again, and, when it
// fails, one of them must write them, before any of their events.
func TestConcurrentWritersShareIndexWrites(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		for _, fail := range []bool{false, true} {
			t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
				inner, cfg := b.Open(t)
				store := newIndexGate(inner, fail)
				db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				ctx := context.Background()
				series := []string{"a", "b", "c", "d", "e"}
				batch := func(w int) []event.Event {
					var evs []event.Event
					for i, s := range series {
						evs = append(evs, ev(apr10.Add(time.Duration(w*len(series)+i)*time.Second), s, map[string]any{"writer": num(w)}))
					}
					return evs
				}

				const writers = 4
				errs := make([]error, writers)
				var wg sync.WaitGroup
				wg.Go(func() { _, errs[0] = db.Write(ctx, "acme", "sensors", batch(0)) })
				<-store.held
				for w := 1; w < writers; w++ {
					wg.Go(func() { _, errs[w] = db.Write(ctx, "acme", "sensors", batch(w)) })
				}
				// A second index write would come soon; if none does in a
				// second, the others are waiting for the first.
				select {
				case <-store.later:
				case <-time.After(time.Second):
				}
				close(store.release)
				wg.Wait()

				want := int64(1)
				if fail {
					var we *engine.WriteError
					require.ErrorAs(t, errs[0], &we, "the held write fails")
					// Its index write failed (naming one entry of five):
					// none of its events is written, and it says so.
					require.Equal(t, []int{0, 1, 2, 3, 4}, we.Unwritten)
					errs[0], want = nil, 2
				}
				require.Equal(t, make([]error, writers), errs)
				require.Equal(t, want, store.writes.Load(), "batch writes of series index entries")
				page, err := db.ListSeries(ctx, "acme", "sensors", "", "", 0)
				require.NoError(t, err)
				require.Equal(t, series, page.Series)
				written := 0
				for _, s := range series {
					written += len(queryAll(t, db, "acme", engine.Query{Table: "sensors", Series: s, From: apr10, To: apr10.Add(time.Hour)}))
				}
				if fail {
					require.Equal(t, (writers-1)*len(series), written)
				} else {
					require.Equal(t, writers*len(series), written)
				}
			})
		}
	})
}
