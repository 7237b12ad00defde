package archive_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestLateEventsOfADeletedTableAreArchivedAgain: a table is archived and
// deleted; the retention is then lengthened, and a late event (without
// write-time grouping) makes the table again, a second generation. When
// its new retention ends, the old generation's verified archive must not
// pass for it: it is archived in its own right before it is deleted, and
// a restore brings back the events of both.
func TestLateEventsOfADeletedTableAreArchivedAgain(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			g := newGenerations(t, b)
			s, cfg, longer, clk, day, url := g.s, g.cfg, g.longer, g.clk, g.day, g.url
			kinds := func(res []lifecycle.Result, table string) []lifecycle.Kind {
				var out []lifecycle.Kind
				for _, r := range res {
					if r.Table == table {
						out = append(out, r.Kind)
					}
				}
				return out
			}
			at := func(i int) event.Event {
				return event.Event{ID: "e" + string(rune('a'+i)), Time: day.Add(time.Duration(i) * time.Minute), Series: "car-17",
					Fields: map[string]any{"speed": json.Number("88")}}
			}

			g.write(cfg, at(0), at(1))
			reg := registry.New(s, cfg.MetaTable)
			entries, err := reg.List(ctx, cfg.Families[0].Name)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			table := entries[0].Name

			// Past retention: archived, then deleted.
			clk.Set(day.Add(5 * 7 * 24 * time.Hour))
			require.Contains(t, kinds(g.cycle(cfg), table), lifecycle.Archive)
			require.Contains(t, kinds(g.cycle(cfg), table), lifecycle.Delete)

			// The retention is lengthened; a late event makes the table
			// again.
			g.write(longer, at(2))
			e, found, err := reg.Finder([]string{cfg.Families[0].Name})(ctx, table)
			require.NoError(t, err)
			require.True(t, found)
			require.EqualValues(t, 2, e.Generation)
			require.Empty(t, kinds(g.cycle(longer), table), "within the new retention")

			// Past the new retention: the second generation is archived
			// before it is deleted.
			clk.Set(day.Add(12 * 7 * 24 * time.Hour))
			require.Equal(t, []lifecycle.Kind{lifecycle.Archive}, kinds(g.cycle(longer), table))
			require.Equal(t, []lifecycle.Kind{lifecycle.Delete}, kinds(g.cycle(longer), table))
			_, err = s.DescribeTable(ctx, table)
			require.ErrorIs(t, err, storage.ErrTableNotFound)

			a, err := openArchiver(s, clk, longer)(url, "")
			require.NoError(t, err)
			ms, err := a.(*archive.Archiver).List(ctx)
			require.NoError(t, err)
			require.Len(t, ms, 2)
			require.EqualValues(t, []int64{1, 2}, []int64{ms[0].Generation, ms[1].Generation})
			require.True(t, ms[0].Verified() && ms[1].Verified())

			// A restore brings back every generation's events.
			require.NoError(t, a.(*archive.Archiver).Restore(ctx, table, ""))
			// Registered as restored, as `timetable archive restore` does:
			// an endpoint without tags (DynamoDB Local) cannot show the
			// table its deployment's otherwise.
			e, found, err = reg.Finder([]string{cfg.Families[0].Name})(ctx, table)
			require.NoError(t, err)
			require.True(t, found)
			_, err = reg.MarkRestored(ctx, e, e.Name, storage.Capacity{Billing: storage.OnDemand}, clk.Now().Add(7*24*time.Hour), clk.Now())
			require.NoError(t, err)
			db, err := engine.Open(ctx, s, engine.Options{Schema: longer, Clock: clk, ReadOnly: true})
			require.NoError(t, err)
			defer db.Close()
			got, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: day, To: day.Add(time.Hour)})
			require.NoError(t, err)
			require.Len(t, got.Events, 3)
		})
	}
}

// generations is the set-up of the tests of a table's generations: a
// family whose tables are archived to a file target after three weeks,
// without write-time grouping so that a late event makes a deleted table
// again, and the same family with a retention of ten weeks (longer),
// under a manual clock an hour into a day of the week of April 9, 2017.
type generations struct {
	t           *testing.T
	s           storage.Store
	cfg, longer family.Schema
	clk         *clock.Manual
	day         time.Time
	url         string
}

func newGenerations(t *testing.T, b backends.Backend) *generations {
	s, cfg := b.Open(t)
	cfg.MetaTable = backends.MetaTable(cfg)
	cfg.Families[0].WriteTimeGrouping = false
	cfg.Families[0].Retention = 3 * 7 * 24 * time.Hour
	url, _ := fileTarget(t)
	cfg.Families[0].Archive = url
	longer := cfg
	longer.Families = []family.Family{cfg.Families[0]}
	longer.Families[0].Retention = 10 * 7 * 24 * time.Hour
	day := time.Date(2017, 4, 11, 12, 0, 0, 0, time.UTC)
	return &generations{t: t, s: s, cfg: cfg, longer: longer, clk: clock.NewManual(day.Add(time.Hour)), day: day, url: url}
}

// write writes evs as tenant acme to logical table a_table under cfg.
func (g *generations) write(cfg family.Schema, evs ...event.Event) {
	g.t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, g.s, engine.Options{Schema: cfg, Clock: g.clk})
	require.NoError(g.t, err)
	defer db.Close()
	_, err = db.Write(ctx, "acme", "a_table", evs)
	require.NoError(g.t, err)
}

// cycle runs one lifecycle cycle under cfg and returns what it did.
func (g *generations) cycle(cfg family.Schema) []lifecycle.Result {
	g.t.Helper()
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: g.s, Families: cfg.Families, Clock: g.clk, MetaTable: cfg.MetaTable,
		Logger: slog.New(slog.DiscardHandler), OpenArchiver: openArchiver(g.s, g.clk, cfg)})
	require.NoError(g.t, err)
	res, err := r.Reconcile(context.Background(), false)
	require.NoError(g.t, err)
	return res
}

// openArchiver opens archivers as the server and the Lambda do: with the
// registry's facts.
func openArchiver(s storage.Store, clk clock.Clock, cfg family.Schema) lifecycle.OpenArchiverFunc {
	var names []string
	for _, f := range cfg.Families {
		names = append(names, f.Name)
	}
	return func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
		return archive.Open(context.Background(), target, s,
			archive.Options{Clock: clk, Format: format, Facts: registry.New(s, cfg.MetaTable).Finder(names)})
	}
}
