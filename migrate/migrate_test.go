package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/migrate"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// now is the time of the tests' writes.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// route is a way from one backend to another; both stores are opened
// with one schema (prefix and meta table), the DynamoDB backend's when
// one of them is DynamoDB.
type route struct {
	name     string
	from, to func(t *testing.T) (storage.Store, family.Schema)
}

// routes returns Pebble → Pebble, and Pebble → DynamoDB and DynamoDB →
// Pebble when a DynamoDB server is there.
func routes(t *testing.T) []route {
	pebble := backends.Pebble().Open
	var rs []route
	if os.Getenv("TIMETABLE_TEST_BACKENDS") != "dynamodb" {
		rs = append(rs, route{"pebble to pebble", pebble, pebble})
	}
	for _, b := range backends.All(t) {
		if b.Name == "dynamodb" {
			rs = append(rs, route{"pebble to dynamodb", pebble, b.Open}, route{"dynamodb to pebble", b.Open, pebble})
		}
	}
	return rs
}

// open opens both stores of a route, with the schema of the DynamoDB one.
func (r route) open(t *testing.T) (from, to storage.Store, sch family.Schema) {
	from, fs := r.from(t)
	to, ts := r.to(t)
	sch = ts
	if fs.MetaTable != "" {
		sch = fs
	}
	return from, to, withLayouts(sch)
}

// withLayouts returns sch with the logical tables of fill in each
// layout: cars in rows, trucks in maps, vans in chunks (a family of its
// own, since a family's tables record that layout).
func withLayouts(sch family.Schema) family.Schema {
	chunks := sch.Families[0]
	chunks.Name, chunks.Prefix, chunks.Layout = "chunks", strings.TrimSuffix(chunks.Prefix, "_")+"c_", family.LayoutChunk
	sch.Families = append(slices.Clone(sch.Families), chunks)
	sch.Tables = map[string]family.Table{"trucks": {Family: sch.Families[0].Name, Layout: family.LayoutMap}, "vans": {Family: chunks.Name}}
	return sch
}

// source is what fill wrote.
type source struct {
	secret string
	// events are the events of logical tables "cars", "trucks" and
	// "vans" (withLayouts), each with the id it was stored under.
	events map[string][]event.Event
}

// fill writes a tenant with a key and three logical tables of events
// over several periods into s, one of each layout, an event of two
// months ago among them.
func fill(t *testing.T, s storage.Store, sch family.Schema, n int) source {
	ctx := t.Context()
	clk := clock.NewManual(now)
	db, err := engine.Open(ctx, s, engine.Options{Schema: sch, Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	dir := tenant.New(s, db.Options().Schema.MetaTable, tenant.Options{Clock: clk})
	secret, err := dir.Add(ctx, "acme", now)
	require.NoError(t, err)
	src := source{secret: secret, events: map[string][]event.Event{}}
	for _, table := range []string{"cars", "trucks", "vans"} {
		var evs []event.Event
		for i := range n {
			evs = append(evs, event.Event{
				Time:   now.Add(-time.Duration(i) * 37 * time.Minute * time.Duration(len(table))),
				Series: fmt.Sprintf("%s-%d", table, i%7),
				Fields: map[string]any{"speed": json.Number(strconv.Itoa(i) + ".5"), "gear": "D"},
			})
		}
		evs = append(evs, event.Event{Time: now.AddDate(0, -2, 0), Series: table + "-late", Fields: map[string]any{"speed": json.Number("1")}})
		_, err := db.Write(ctx, "acme", table, evs)
		require.NoError(t, err)
		src.events[table] = query(t, db, table)
		require.Len(t, src.events[table], n+1)
	}
	return src
}

// query returns every event of a logical table of tenant acme.
func query(t *testing.T, db *engine.DB, table string) []event.Event {
	var out []event.Event
	q := engine.Query{Table: table, From: now.AddDate(-1, 0, 0), To: now, Limit: engine.DefaultMaxLimit}
	for {
		p, err := db.Query(t.Context(), "acme", q)
		require.NoError(t, err)
		out = append(out, p.Events...)
		if p.NextCursor == "" {
			return out
		}
		q.Cursor = p.NextCursor
	}
}

// check opens the target as a server would and checks that the key
// works and every event is there, once, as it was.
func check(t *testing.T, to storage.Store, sch family.Schema, src source) {
	ctx := t.Context()
	clk := clock.NewManual(now)
	db, err := engine.Open(ctx, to, engine.Options{Schema: sch, Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	dir := tenant.New(to, db.Options().Schema.MetaTable, tenant.Options{Clock: clk})
	k, err := dir.Authenticate(ctx, src.secret)
	require.NoError(t, err, "the tenant's key works on the target")
	require.Equal(t, "acme", k.Tenant)
	for table, want := range src.events {
		require.Equal(t, want, query(t, db, table), "events of %s", table)
	}
}

func TestMigrate(t *testing.T) {
	for _, r := range routes(t) {
		t.Run(r.name, func(t *testing.T) {
			ctx := t.Context()
			from, to, sch := r.open(t)
			src := fill(t, from, sch, 150)
			opts := migrate.Options{MetaTable: backends.MetaTable(sch), Source: "a", PageItems: 50}
			first := run(t, from, to, opts)
			check(t, to, sch, src)
			require.GreaterOrEqual(t, len(first.Tables), 4, "data tables and the meta table")
			for _, tr := range first.Tables {
				require.Equal(t, tr.Items, tr.Copied, "table %s", tr.Name)
				require.NotEmpty(t, tr.Hash)
			}
			require.Equal(t, backends.MetaTable(sch), first.Tables[len(first.Tables)-1].Name, "the meta table comes last")
			require.True(t, slices.ContainsFunc(first.Tables, func(tr migrate.TableReport) bool { return strings.HasPrefix(tr.Name, sch.Families[1].Prefix) }),
				"the chunk family's tables are copied")

			// Twice: nothing written again, the same hashes.
			second := run(t, from, to, opts)
			require.Len(t, second.Tables, len(first.Tables))
			for i, tr := range second.Tables {
				require.Zero(t, tr.Copied, "table %s", tr.Name)
				require.Equal(t, first.Tables[i].Hash, tr.Hash)
				require.Equal(t, first.Tables[i].Items, tr.Items)
			}
			check(t, to, sch, src)

			// Another source into the same target is refused.
			m, err := migrate.New(from, to, migrate.Options{MetaTable: opts.MetaTable, Source: "b"})
			require.NoError(t, err)
			p, err := m.Plan(ctx)
			require.NoError(t, err)
			_, err = m.Run(ctx, p)
			require.ErrorIs(t, err, migrate.ErrTargetInUse)
		})
	}
}

// run plans and runs a migration.
func run(t *testing.T, from, to storage.Store, o migrate.Options) migrate.Report {
	t.Helper()
	m, err := migrate.New(from, to, o)
	require.NoError(t, err)
	p, err := m.Plan(t.Context())
	require.NoError(t, err)
	r, err := m.Run(t.Context(), p)
	require.NoError(t, err)
	return r
}

// stopper is a target that cancels its migration after a count of
// writes into data tables.
type stopper struct {
	storage.Store
	meta   string
	writes int
	cancel func()
}

func (s *stopper) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if table == s.meta {
		return s.Store.BatchWrite(ctx, table, items)
	}
	if s.writes--; s.writes == 0 {
		s.cancel()
	}
	return s.Store.BatchWrite(ctx, table, items)
}

// TestMigrateResumes stops a migration after every few writes and runs
// it again until it is done: every event is there once, and no page but
// those cut short is written twice.
func TestMigrateResumes(t *testing.T) {
	for _, r := range routes(t) {
		t.Run(r.name, func(t *testing.T) {
			from, to, sch := r.open(t)
			src := fill(t, from, sch, 80)
			var (
				report  migrate.Report
				runs    int
				written int64
				err     error
			)
			for runs = 1; runs < 100; runs++ {
				ctx, cancel := context.WithCancel(t.Context())
				target := &stopper{Store: to, meta: backends.MetaTable(sch), writes: 4, cancel: cancel}
				var m *migrate.Migration
				m, err = migrate.New(from, target, migrate.Options{MetaTable: backends.MetaTable(sch), Source: "a", PageItems: 20})
				require.NoError(t, err)
				p, perr := m.Plan(t.Context())
				require.NoError(t, perr)
				report, err = m.Run(ctx, p)
				cancel()
				for _, tr := range report.Tables {
					written += tr.Copied
				}
				if err == nil {
					break
				}
				require.ErrorIs(t, err, context.Canceled)
			}
			require.NoError(t, err)
			require.Greater(t, runs, 3, "the migration was stopped")
			check(t, to, sch, src)
			require.Less(t, written, 2*report.Items(), "pages copied once, but those cut short")
		})
	}
}

// TestMigrateRefusesATargetInUse checks that a migration never merges
// into a store a timetable uses, nor into a table it did not make.
func TestMigrateRefusesATargetInUse(t *testing.T) {
	for _, r := range routes(t) {
		t.Run(r.name, func(t *testing.T) {
			ctx := t.Context()
			from, to, sch := r.open(t)
			fill(t, from, sch, 10)
			fill(t, to, sch, 10)
			m, err := migrate.New(from, to, migrate.Options{MetaTable: backends.MetaTable(sch), Source: "a"})
			require.NoError(t, err)
			p, err := m.Plan(ctx)
			require.NoError(t, err)
			_, err = m.Run(ctx, p)
			require.ErrorIs(t, err, migrate.ErrTargetInUse)
			require.ErrorContains(t, err, "holds the items of a timetable already")
		})
	}
	t.Run("a table of the same name", func(t *testing.T) {
		backends.NoDynamoDB(t)
		ctx := t.Context()
		from, sch := backends.Pebble().Open(t)
		to, _ := backends.Pebble().Open(t)
		sch = withLayouts(sch)
		fill(t, from, sch, 10)
		m, err := migrate.New(from, to, migrate.Options{MetaTable: backends.MetaTable(sch), Source: "a"})
		require.NoError(t, err)
		p, err := m.Plan(ctx)
		require.NoError(t, err)
		require.NoError(t, to.CreateTable(ctx, storage.TableSpec{Name: p.Tables[0].Name}))
		_, err = m.Run(ctx, p)
		require.ErrorIs(t, err, migrate.ErrTargetInUse)
		require.ErrorContains(t, err, p.Tables[0].Name)
	})
	t.Run("no source", func(t *testing.T) {
		backends.NoDynamoDB(t)
		from, sch := backends.Pebble().Open(t)
		to, _ := backends.Pebble().Open(t)
		m, err := migrate.New(from, to, migrate.Options{MetaTable: backends.MetaTable(sch)})
		require.NoError(t, err)
		_, err = m.Plan(t.Context())
		require.ErrorIs(t, err, migrate.ErrNoSource)
	})
}

// TestMigrateCopiesAgainWhatChanged checks that a table whose source
// changed after its copy is copied again by the next run, and that a
// target that holds an item the source lacks fails the verification.
func TestMigrateCopiesAgainWhatChanged(t *testing.T) {
	backends.NoDynamoDB(t)
	ctx := t.Context()
	from, sch := backends.Pebble().Open(t)
	to, _ := backends.Pebble().Open(t)
	sch = withLayouts(sch)
	fill(t, from, sch, 20)
	opts := migrate.Options{MetaTable: backends.MetaTable(sch), Source: "a"}
	first := run(t, from, to, opts)
	table := first.Tables[0].Name
	extra := storage.Item{PK: "acme#cars#x#0", SK: "x", Attrs: map[string]any{"v": "1"}}
	require.NoError(t, from.BatchWrite(ctx, table, []storage.Item{extra}))
	second := run(t, from, to, opts)
	require.Equal(t, first.Tables[0].Items+1, second.Tables[0].Items)
	require.Equal(t, second.Tables[0].Items, second.Tables[0].Copied)

	require.NoError(t, to.BatchWrite(ctx, table, []storage.Item{{PK: "acme#cars#y#0", SK: "y", Attrs: map[string]any{"v": "2"}}}))
	m, err := migrate.New(from, to, opts)
	require.NoError(t, err)
	p, err := m.Plan(ctx)
	require.NoError(t, err)
	_, err = m.Run(ctx, p)
	require.ErrorIs(t, err, migrate.ErrDiffers)
	require.ErrorContains(t, err, table)
}

// TestOptionsRefusedWhenNegative checks that a negative budget or page
// is refused.
func TestOptionsRefusedWhenNegative(t *testing.T) {
	backends.NoDynamoDB(t)
	for _, o := range []migrate.Options{{MetaTable: "m", WriteUnits: -1}, {MetaTable: "m", PageItems: -1}, {}} {
		_, err := migrate.New(nil, nil, o)
		require.Error(t, err, "%+v", o)
	}
}
