package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
)

// TestRewrittenTableArchived: a chunk family's table, its events written
// one at a time, is rewritten by the lifecycle into its next physical
// table as it leaves the hot tier, then archived and deleted past
// retention: the archive and the delete act on the table the entry
// names, and a query answers the same all along, from the archive at the
// end.
func TestRewrittenTableArchived(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f := newRewriteFixture(t, b, 7*time.Minute, 3*time.Hour)
			g, cfg, clk, day, answer := f.generations, f.cfg, f.clk, f.day, f.answer
			before := answer()
			require.Contains(t, before, "12 ")
			entry := f.entry
			cycle := func() []lifecycle.Kind {
				t.Helper()
				r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: g.s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
					Logger: slog.New(slog.DiscardHandler), OpenArchiver: openArchiver(g.s, clk, cfg), Compaction: compact.NextGeneration})
				require.NoError(t, err)
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err)
				var kinds []lifecycle.Kind
				for _, x := range res {
					require.NoError(t, x.Err, "%s %s", x.Kind, x.Table)
					kinds = append(kinds, x.Kind)
				}
				return kinds
			}
			name := entry().Name
			// Out of the hot tier: rewritten.
			for range 14 {
				if entry().Physical != "" {
					break
				}
				clk.Set(clk.Now().Add(24 * time.Hour))
				cycle()
			}
			require.Equal(t, name+".r1", entry().TableName())
			require.Nil(t, entry().Rewrite, "the old table deleted")
			require.Equal(t, before, answer())

			// Past retention: archived and deleted.
			clk.Set(day.Add(5 * 7 * 24 * time.Hour))
			require.Contains(t, cycle(), lifecycle.Archive)
			require.Contains(t, cycle(), lifecycle.Delete)
			e := entry()
			require.Equal(t, registry.Deleted, e.State)
			_, err := g.s.DescribeTable(ctx, e.TableName())
			require.Error(t, err, "the rewritten table deleted")
			require.Equal(t, before, answer(), "from the archive of the rewritten table")
		})
	}
}

// TestRewriteUnderWayArchived: a rewrite stopped in its copy (its new
// table made and part-filled) when the table passes retention is not
// resumed: the table is archived and deleted, and the rewrite's new
// table with it; the events read the same from the archive.
func TestRewriteUnderWayArchived(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f := newRewriteFixture(t, b, 17*time.Minute, 5*time.Hour)
			g, cfg, clk, day, answer := f.generations, f.cfg, f.clk, f.day, f.answer
			before := answer()
			reg, entry := f.reg, f.entry
			// One window copied, then stopped at the deadline.
			e, err := reg.Save(ctx, compact.AsChunks(entry(), time.Hour))
			require.NoError(t, err)
			deadline := time.Now().Add(time.Hour)
			dctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			_, _, err = compact.Entry(dctx, g.s, reg, e, clk.Now(), compact.Options{Method: compact.NextGeneration, Now: func() time.Time { return deadline }})
			require.ErrorIs(t, err, compact.ErrStopped)
			rw := entry().Rewrite
			require.NotNil(t, rw)
			require.Equal(t, registry.RewriteCopy, rw.Step)
			_, err = g.s.DescribeTable(ctx, rw.Table)
			require.NoError(t, err)
			require.Equal(t, before, answer())

			clk.Set(day.Add(5 * 7 * 24 * time.Hour))
			for range 3 {
				if entry().State == registry.Deleted {
					break
				}
				r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: g.s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
					Logger: slog.New(slog.DiscardHandler), OpenArchiver: openArchiver(g.s, clk, cfg), Compaction: compact.NextGeneration})
				require.NoError(t, err)
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err)
				for _, x := range res {
					require.NoError(t, x.Err, "%s %s", x.Kind, x.Table)
					require.NotEqual(t, lifecycle.Compact, x.Kind, "past retention: not resumed")
				}
			}
			e = entry()
			require.Equal(t, registry.Deleted, e.State)
			require.Nil(t, e.Rewrite)
			_, err = g.s.DescribeTable(ctx, rw.Table)
			require.Error(t, err, "the rewrite's new table deleted with the table")
			require.Equal(t, before, answer(), "from the archive")
		})
	}
}

// rewriteFixture is a table of a chunk family of day tables
// (newGenerations), 12 events written one at a time into its day, and
// a read-only engine over the live tables and the archives.
type rewriteFixture struct {
	*generations // its cfg's family is of the chunk layout
	reg          *registry.Registry
	answer       func() string         // the events of the day, as a query answers them
	entry        func() registry.Entry // the registry entry of the day's table
}

// newRewriteFixture writes the events step apart from the day's start
// and queries the day from an hour before it to span after its start.
func newRewriteFixture(t *testing.T, b backends.Backend, step, span time.Duration) *rewriteFixture {
	ctx := context.Background()
	g := newGenerations(t, b)
	cfg, day := g.cfg, g.day // cfg shares g.cfg's families
	cfg.Families[0].Layout, cfg.Families[0].ChunkWindow = family.LayoutChunk, time.Hour
	for i := range 12 {
		g.write(cfg, event.Event{Time: day.Add(time.Duration(i) * step), Series: fmt.Sprint("s", i%2), Fields: map[string]any{"v": json.Number(fmt.Sprint(i))}})
	}
	archives := archive.NewReader(archive.ReaderOptions{CacheDir: t.TempDir()})
	t.Cleanup(func() { archives.Close() })
	db, err := engine.Open(ctx, g.s, engine.Options{Schema: cfg, Clock: g.clk, Archives: archives, ReadOnly: true})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	q := engine.Query{Table: "a_table", From: day.Add(-time.Hour), To: day.Add(span)}
	f := &rewriteFixture{generations: g, reg: registry.New(g.s, cfg.MetaTable)}
	f.answer = func() string {
		t.Helper()
		p, err := db.QueryJSON(ctx, "acme", q, nil)
		require.NoError(t, err)
		require.Empty(t, p.Gaps)
		return fmt.Sprintf("%d %s", p.Count, p.Events)
	}
	f.entry = func() registry.Entry {
		t.Helper()
		es, err := f.reg.List(ctx, cfg.Families[0].Name)
		require.NoError(t, err)
		for _, e := range es {
			if e.Ref.Period.Contains(day) {
				return e
			}
		}
		t.Fatal("no table of the day")
		return registry.Entry{}
	}
	return f
}
