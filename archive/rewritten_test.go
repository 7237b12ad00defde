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
	"github.com/timetabledb/timetable/storage"
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
	query        engine.Query
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
	f := &rewriteFixture{generations: g, reg: registry.New(g.s, cfg.MetaTable), query: q}
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

// TestRewrittenTableRestored: a table rewritten into its next physical
// table is archived and deleted. Its archive is kept under the rewritten
// table's name, and a restore under the entry's name finds it; registered
// as restored, the entry names the restored table, and the events read
// back as before, each once.
func TestRewrittenTableRestored(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f, a, before := archivedRewritten(t, b)
			name := f.entry().Name
			require.NoError(t, a.Restore(ctx, name, ""))
			m, err := a.Manifest(ctx, name)
			require.NoError(t, err)
			require.Equal(t, m.ItemCount, countItems(t, f.s, name), "the archive's items")
			_, err = f.reg.MarkRestored(ctx, f.entry(), name, storage.Capacity{Billing: storage.OnDemand}, f.clk.Now().Add(7*24*time.Hour), f.clk.Now())
			require.NoError(t, err)
			require.Equal(t, name, f.entry().TableName(), "reads go to the restored table")
			require.Equal(t, before, f.answer(), "from the restored table")
		})
	}
}

// TestRewrittenTablePastArchive: a late event makes a rewritten table
// that was archived and deleted again (generation 2). The entry's past
// archive names the physical table generation 1 was archived from, the
// engine reads that archive beside the new table, and once generation 2
// is archived and deleted too a restore brings back both generations'
// events, each once.
func TestRewrittenTablePastArchive(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f, _, before := archivedRewritten(t, b)
			name := f.entry().Name
			late := event.Event{Time: f.day.Add(2 * time.Hour), Series: "s9", Fields: map[string]any{"v": json.Number("99")}}
			f.write(f.longer, late)
			e := f.entry()
			require.EqualValues(t, 2, e.Generation)
			require.Empty(t, e.Physical)
			require.Equal(t, []registry.PastArchive{{Generation: 1, Target: f.url, Physical: name + ".r1"}}, e.PastArchives)
			after := f.answerUnder(f.longer)
			require.Contains(t, after, "13 ", "generation 1 from its archive, generation 2 from its table")
			require.NotEqual(t, before, after)

			// Past the new retention: generation 2 archived and deleted,
			// then both restored under the entry's name.
			f.clk.Set(f.day.Add(12 * 7 * 24 * time.Hour))
			require.Contains(t, f.kinds(f.longer), lifecycle.Archive)
			require.Contains(t, f.kinds(f.longer), lifecycle.Delete)
			ar, err := openArchiver(f.s, f.clk, f.longer)(f.url, "")
			require.NoError(t, err)
			require.NoError(t, ar.(*archive.Archiver).Restore(ctx, name, ""))
			_, err = f.reg.MarkRestored(ctx, f.entry(), name, storage.Capacity{Billing: storage.OnDemand}, f.clk.Now().Add(7*24*time.Hour), f.clk.Now())
			require.NoError(t, err)
			require.Equal(t, after, f.answerUnder(f.longer), "from the restored table, each event once")
		})
	}
}

// archivedRewritten returns a rewrite fixture whose day's table was
// rewritten by the lifecycle, then archived and deleted past retention;
// an archiver of its target; and the day's events as a query answered
// them before.
func archivedRewritten(t *testing.T, b backends.Backend) (*rewriteFixture, *archive.Archiver, string) {
	f := newRewriteFixture(t, b, 7*time.Minute, 3*time.Hour)
	before := f.answer()
	require.Contains(t, before, "12 ")
	name := f.entry().Name
	for range 14 {
		if f.entry().Physical != "" && f.entry().Rewrite == nil {
			break
		}
		f.clk.Set(f.clk.Now().Add(24 * time.Hour))
		f.kinds(f.cfg)
	}
	require.Equal(t, name+".r1", f.entry().TableName())
	f.clk.Set(f.day.Add(5 * 7 * 24 * time.Hour))
	require.Contains(t, f.kinds(f.cfg), lifecycle.Archive)
	require.Contains(t, f.kinds(f.cfg), lifecycle.Delete)
	require.Equal(t, registry.Deleted, f.entry().State)
	ar, err := openArchiver(f.s, f.clk, f.cfg)(f.url, "")
	require.NoError(t, err)
	a := ar.(*archive.Archiver)
	m, err := a.Manifest(context.Background(), name)
	require.NoError(t, err, "found under the entry's name")
	require.Equal(t, name+".r1", m.Table, "the archive is of the rewritten table")
	return f, a, before
}

// kinds runs one lifecycle cycle under cfg, rewriting tables into their
// next generation, and returns the kinds of the actions it did.
func (f *rewriteFixture) kinds(cfg family.Schema) []lifecycle.Kind {
	f.t.Helper()
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: f.s, Families: cfg.Families, Clock: f.clk, MetaTable: cfg.MetaTable,
		Logger: slog.New(slog.DiscardHandler), OpenArchiver: openArchiver(f.s, f.clk, cfg), Compaction: compact.NextGeneration})
	require.NoError(f.t, err)
	res, err := r.Reconcile(context.Background(), false)
	require.NoError(f.t, err)
	var kinds []lifecycle.Kind
	for _, x := range res {
		require.NoError(f.t, x.Err, "%s %s", x.Kind, x.Table)
		kinds = append(kinds, x.Kind)
	}
	return kinds
}

// answerUnder returns the fixture's query as an engine under cfg, reading
// archives, answers it.
func (f *rewriteFixture) answerUnder(cfg family.Schema) string {
	f.t.Helper()
	ctx := context.Background()
	archives := archive.NewReader(archive.ReaderOptions{CacheDir: f.t.TempDir()})
	defer archives.Close()
	db, err := engine.Open(ctx, f.s, engine.Options{Schema: cfg, Clock: f.clk, Archives: archives, ReadOnly: true})
	require.NoError(f.t, err)
	defer db.Close()
	p, err := db.QueryJSON(ctx, "acme", f.query, nil)
	require.NoError(f.t, err)
	require.Empty(f.t, p.Gaps)
	return fmt.Sprintf("%d %s", p.Count, p.Events)
}

// countItems counts a table's items.
func countItems(t *testing.T, s storage.Store, table string) int64 {
	t.Helper()
	it := s.Scan(context.Background(), table)
	defer it.Close()
	var n int64
	for it.Next() {
		n++
	}
	require.NoError(t, it.Err())
	return n
}
