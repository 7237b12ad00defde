package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
)

// TestReaderReadsEveryGeneration: a table is archived and deleted, a
// late event makes it again (generation 2), which is archived and
// deleted in turn. At each step a query of the period answers with the
// events of every generation, each once, paged or not, as it did before
// the archives; an engine without the archive reader says which generation it
// cannot read.
func TestReaderReadsEveryGeneration(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			g := newGenerations(t, b)
			s, cfg, longer, clk, day, url := g.s, g.cfg, g.longer, g.clk, g.day, g.url
			at := func(i int) event.Event {
				return event.Event{ID: fmt.Sprintf("e%02d", i), Time: day.Add(time.Duration(i) * time.Minute),
					Series: []string{"car-17", "car-18"}[i%2], Fields: map[string]any{"speed": json.Number(fmt.Sprint(80 + i))}}
			}
			var first, late []event.Event
			for i := range 8 {
				first = append(first, at(i))
				late = append(late, at(30+i))
			}
			cycle := func(cfg family.Schema, want lifecycle.Kind) {
				t.Helper()
				var kinds []lifecycle.Kind
				for _, x := range g.cycle(cfg) {
					require.NoError(t, x.Err)
					kinds = append(kinds, x.Kind)
				}
				require.Contains(t, kinds, want)
			}
			archives := archive.NewReader(archive.ReaderOptions{CacheDir: t.TempDir()})
			t.Cleanup(func() { archives.Close() })
			var db *engine.DB

			ids := func(evs []event.Event) []string {
				var out []string
				for _, e := range evs {
					out = append(out, e.ID)
				}
				return out
			}
			early := engine.Query{Table: "a_table", From: day, To: day.Add(20 * time.Minute)}
			whole := engine.Query{Table: "a_table", From: day.Add(-time.Hour), To: day.Add(time.Hour)}
			answer := func(q engine.Query) string {
				t.Helper()
				p, err := db.QueryJSON(ctx, "acme", q, nil)
				require.NoError(t, err)
				require.Empty(t, p.Gaps)
				return fmt.Sprintf("%d %s", p.Count, p.Events)
			}
			// paged reads q in pages of 3, forwards and backwards.
			paged := func(q engine.Query) []string {
				t.Helper()
				var out []string
				for _, desc := range []bool{false, true} {
					q := q
					q.Limit, q.Desc = 3, desc
					var got []string
					for range 20 {
						p, err := db.Query(ctx, "acme", q)
						require.NoError(t, err)
						require.Empty(t, p.Gaps)
						got = append(got, ids(p.Events)...)
						if p.NextCursor == "" {
							break
						}
						q.Cursor = p.NextCursor
					}
					if desc {
						for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
							got[i], got[j] = got[j], got[i]
						}
					}
					if out != nil {
						require.Equal(t, out, got, "the same events backwards")
					}
					out = got
				}
				return out
			}

			g.write(cfg, first...)
			db, err := engine.Open(ctx, s, engine.Options{Schema: longer, Clock: clk, Archives: archives, ReadOnly: true})
			require.NoError(t, err)
			defer db.Close()
			before := answer(early)
			require.Equal(t, ids(first), paged(whole))

			// Generation 1 is archived and deleted; a late event makes
			// generation 2.
			clk.Set(day.Add(5 * 7 * 24 * time.Hour))
			cycle(cfg, lifecycle.Archive)
			cycle(cfg, lifecycle.Delete)
			require.Equal(t, before, answer(early), "generation 1 from its archive")
			g.write(longer, late...)
			e, found, err := registry.New(s, cfg.MetaTable).Finder([]string{cfg.Families[0].Name})(ctx, table(t, db))
			require.NoError(t, err)
			require.True(t, found)
			require.EqualValues(t, 2, e.Generation)
			require.Equal(t, []registry.PastArchive{{Generation: 1, Target: url}}, e.PastArchives)

			require.Equal(t, before, answer(early), "generation 1 beside generation 2")
			all := append(ids(first), ids(late)...)
			require.Equal(t, all, paged(whole), "every event of both, once")
			both := answer(whole)
			agg := engine.AggregateQuery{Table: "a_table", From: whole.From, To: whole.To, Bucket: time.Hour, Fields: []string{"speed"}, Funcs: []string{engine.FnCount, engine.FnSum}}
			sums, err := db.Aggregate(ctx, "acme", agg)
			require.NoError(t, err)
			aggBefore, err := json.Marshal(sums)
			require.NoError(t, err)
			require.Contains(t, string(aggBefore), `"count":16`)

			// Without the archive reader, generation 1 is a gap.
			plain, err := engine.Open(ctx, s, engine.Options{Schema: longer, Clock: clk, ReadOnly: true})
			require.NoError(t, err)
			defer plain.Close()
			p, err := plain.Query(ctx, "acme", whole)
			require.NoError(t, err)
			require.Equal(t, ids(late), ids(p.Events))
			require.Len(t, p.Gaps, 1)
			require.Contains(t, p.Gaps[0].Reason, "generation 1")

			// Generation 2 is archived and deleted: the answers stay.
			clk.Set(day.Add(12 * 7 * 24 * time.Hour))
			cycle(longer, lifecycle.Archive)
			cycle(longer, lifecycle.Delete)
			require.Equal(t, before, answer(early))
			require.Equal(t, both, answer(whole))
			require.Equal(t, all, paged(whole))
			sums, err = db.Aggregate(ctx, "acme", agg)
			require.NoError(t, err)
			aggAfter, err := json.Marshal(sums)
			require.NoError(t, err)
			require.JSONEq(t, string(aggBefore), string(aggAfter))
		})
	}
}

// table returns the name of the one physical table db has.
func table(t *testing.T, db *engine.DB) string {
	t.Helper()
	ts, err := db.Tables(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, ts)
	return ts[0].Name
}
