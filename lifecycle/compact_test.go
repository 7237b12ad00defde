package lifecycle_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/metricstest"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestCompactAfterHotTier writes events one at a time into a table of a
// chunk family. While the table is hot the lifecycle does not compact
// it; once it leaves the hot tier the lifecycle fences it, and, the
// fence settled, packs its rows into chunks and lifts the fence: reads
// answer as before from fewer items, and a late event lands and is
// found. On every backend, in place and into the table's next physical
// table (whose old table the lifecycle deletes once the fence settle
// time has passed since the switch).
func TestCompactAfterHotTier(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, method := range []compact.Method{compact.InPlace, compact.NextGeneration} {
			t.Run(b.Name+"/"+cmp.Or(string(method), "in-place"), func(t *testing.T) {
				ctx := context.Background()
				store, cfg := b.Open(t)
				cfg.Families[0].Layout, cfg.Families[0].ChunkWindow = family.LayoutChunk, time.Hour
				metaTables.Store(cfg.Families[0].Prefix, cfg.MetaTable)
				start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // a Sunday
				clk := clock.NewManual(start.Add(time.Hour))
				db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
				require.NoError(t, err)
				defer db.Close()
				r := reconciler(t, lifecycle.Options{ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clk, Compaction: method})
				_, err = r.Reconcile(ctx, false)
				require.NoError(t, err)

				for i := range 40 {
					ev := event.Event{Time: start.Add(time.Duration(i) * 7 * time.Minute), Series: fmt.Sprint("s", i%2), Fields: map[string]any{"v": json.Number(fmt.Sprint(i))}}
					_, err := db.Write(ctx, "acme", "t", []event.Event{ev})
					require.NoError(t, err)
				}
				q := engine.Query{Table: "t", From: start, To: start.Add(week), Limit: 1000}
				before, err := db.Query(ctx, "acme", q)
				require.NoError(t, err)
				require.Len(t, before.Events, 40)

				compacts := func(res []lifecycle.Result) []lifecycle.Result {
					var out []lifecycle.Result
					for _, r := range res {
						if r.Kind == lifecycle.Compact {
							out = append(out, r)
						}
					}
					return out
				}
				// Hot: not compacted.
				clk.Set(start.Add(3 * 24 * time.Hour))
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err)
				require.Empty(t, compacts(res), "a hot table is not compacted")

				// Warm: fenced first, compacted once the fence settled; not
				// by a reconciler whose clock may run ahead of the
				// writers' by more than the minute since.
				clk.Set(start.Add(week + grace + time.Minute))
				skewed := reconciler(t, lifecycle.Options{Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clk})
				res, err = skewed.Reconcile(ctx, true)
				require.NoError(t, err)
				require.Empty(t, compacts(res), "within the clock skew")
				res, err = r.Reconcile(ctx, false)
				require.NoError(t, err)
				require.Len(t, compacts(res), 1)
				require.ErrorIs(t, compacts(res)[0].Err, lifecycle.ErrFenceSettling)
				reg := registry.New(store, backends.MetaTable(cfg))
				entry := func() registry.Entry { return entryOf(t, reg, cfg.Families[0].Name, start) }
				require.True(t, entry().Fenced())
				require.True(t, entry().ChunkedAt.IsZero())
				// While fenced, a late event is refused, to be retried.
				clk.Set(clk.Now().Add(time.Minute)) // past the route cache
				_, err = db.Write(ctx, "acme", "t", []event.Event{{Time: start.Add(time.Minute), Series: "s0", Fields: map[string]any{"v": json.Number("7")}}})
				require.ErrorIs(t, err, engine.ErrFenced)

				clk.Set(clk.Now().Add(registry.DefaultFenceSettle))
				res, err = r.Reconcile(ctx, false)
				require.NoError(t, err)
				require.Len(t, compacts(res), 1)
				require.NoError(t, compacts(res)[0].Err)
				e := entry()
				require.False(t, e.Fenced(), "the fence is lifted")
				require.False(t, e.ChunkedAt.IsZero())

				if method == compact.NextGeneration {
					require.Equal(t, e.Name+".r1", e.TableName())
					require.Equal(t, registry.RewriteDrop, e.Rewrite.Step, "the old table is kept for the reads that listed it")
					_, err := store.DescribeTable(ctx, e.Name)
					require.NoError(t, err)
					clk.Set(clk.Now().Add(registry.DefaultFenceSettle))
					res, err = r.Reconcile(ctx, false)
					require.NoError(t, err)
					require.Len(t, compacts(res), 1)
					require.NoError(t, compacts(res)[0].Err)
					e = entry()
					require.Nil(t, e.Rewrite)
					_, err = store.DescribeTable(ctx, e.Name)
					require.ErrorIs(t, err, storage.ErrTableNotFound, "the old table is deleted")
				}
				rows, chunks := 0, 0
				it := store.Scan(ctx, e.TableName())
				for it.Next() {
					i := it.Item()
					switch {
					case !strings.Contains(i.PK, "#t#"):
					case chunk.IsSortKey(i.SK):
						chunks++
					default:
						rows++
					}
				}
				require.NoError(t, it.Close())
				require.Zero(t, rows)
				require.Less(t, chunks, 40)

				// Compacted once.
				res, err = r.Reconcile(ctx, false)
				require.NoError(t, err)
				require.Empty(t, compacts(res))

				clk.Set(clk.Now().Add(time.Minute)) // past the route cache
				after, err := db.Query(ctx, "acme", q)
				require.NoError(t, err)
				require.Equal(t, before.Events, after.Events)

				late := event.Event{Time: start.Add(5 * time.Minute), Series: "s1", Fields: map[string]any{"v": json.Number("-1")}}
				_, err = db.Write(ctx, "acme", "t", []event.Event{late})
				require.NoError(t, err)
				after, err = db.Query(ctx, "acme", q)
				require.NoError(t, err)
				require.Len(t, after.Events, 41)
			})
		}
	}
}

// losingCopies is a store that loses the last item of each write of
// several to a rewrite's new table: a copy that does not verify.
type losingCopies struct{ storage.Store }

func (s losingCopies) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if strings.Contains(table, ".r") && len(items) > 1 {
		items = items[:len(items)-1]
	}
	return s.Store.BatchWrite(ctx, table, items)
}

// TestRewriteVerifyFailureBacksOff: a rewrite whose copy does not verify
// fails the action, counts in timetable_lifecycle_rewrite_verify_failures_total,
// deletes the copy and lifts the fence; the lifecycle then plans no
// compaction of the table until the failure's delay has passed
// (compact.RetryDelay), and a second failure doubles it.
func TestRewriteVerifyFailureBacksOff(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			cfg.Families[0].Layout, cfg.Families[0].ChunkWindow = family.LayoutChunk, time.Hour
			metaTables.Store(cfg.Families[0].Prefix, cfg.MetaTable)
			start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // a Sunday
			clk := clock.NewManual(start.Add(time.Hour))
			db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer db.Close()
			for i := range 20 {
				ev := event.Event{Time: start.Add(time.Duration(i) * 7 * time.Minute), Series: fmt.Sprint("s", i%2), Fields: map[string]any{"v": json.Number(fmt.Sprint(i))}}
				_, err := db.Write(ctx, "acme", "t", []event.Event{ev})
				require.NoError(t, err)
			}
			metrics := prometheus.NewRegistry()
			r := reconciler(t, lifecycle.Options{ClockSkew: -1, FenceSettle: -1, Store: losingCopies{store}, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clk,
				Compaction: compact.NextGeneration, Registerer: metrics})
			reg := registry.New(store, backends.MetaTable(cfg))
			entry := func() registry.Entry { return entryOf(t, reg, cfg.Families[0].Name, start) }
			// compacts runs cycles until one compacts the table (the
			// first fences it), and returns that compaction's error; nil
			// when a cycle plans none.
			compacts := func() (planned bool, err error) {
				for range 2 {
					res, _ := r.Reconcile(ctx, false)
					planned = false
					for _, x := range res {
						if x.Kind == lifecycle.Compact {
							planned, err = true, x.Err
						}
					}
					if !planned || !errors.Is(err, lifecycle.ErrFenceSettling) {
						return planned, err
					}
				}
				return planned, err
			}
			failures := func() float64 {
				return metricstest.Value(t, metrics, "timetable_lifecycle_rewrite_verify_failures_total", nil)
			}

			clk.Set(start.Add(week + grace + time.Minute))
			planned, err := compacts()
			require.True(t, planned)
			require.ErrorIs(t, err, compact.ErrVerify)
			require.EqualValues(t, 1, failures())
			e := entry()
			require.False(t, e.Fenced())
			require.Equal(t, e.Name, e.TableName())
			require.Equal(t, 1, e.RewriteFailed.Count)
			_, err = store.DescribeTable(ctx, e.Name+".r1")
			require.ErrorIs(t, err, storage.ErrTableNotFound, "the copy costs nothing while the table waits")

			clk.Set(clk.Now().Add(compact.FirstRetryDelay - time.Minute))
			planned, _ = compacts()
			require.False(t, planned, "put off")
			require.EqualValues(t, 1, failures())

			clk.Set(clk.Now().Add(time.Minute))
			planned, err = compacts()
			require.True(t, planned)
			require.ErrorIs(t, err, compact.ErrVerify)
			require.EqualValues(t, 2, failures())
			require.Equal(t, 2, entry().RewriteFailed.Count)
			require.Equal(t, clk.Now().Add(2*compact.FirstRetryDelay).UTC(), entry().RewriteFailed.RetryAt)
		})
	}
}

// entryOf returns the registry entry of family's table whose period
// holds at.
func entryOf(t *testing.T, reg *registry.Registry, family string, at time.Time) registry.Entry {
	t.Helper()
	es, err := reg.List(context.Background(), family)
	require.NoError(t, err)
	for _, e := range es {
		if e.Ref.Period.Contains(at) {
			return e
		}
	}
	t.Fatal("no table of the week")
	return registry.Entry{}
}
