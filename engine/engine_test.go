package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

type fixture struct {
	// prefix starts the names of the fixture's tables.
	prefix string
	db     *engine.DB
	store  storage.Store
	clock  *clock.Manual
}

// each runs a test on every backend.
func each(t *testing.T, test func(t *testing.T, b backends.Backend)) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) { test(t, b) })
	}
}

func open(t *testing.T, b backends.Backend, shards int, now time.Time) *fixture {
	t.Helper()
	store, cfg := b.Open(t)
	cfg.Families[0].Shards = shards
	clk := clock.NewManual(now)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return &fixture{prefix: cfg.Families[0].Prefix, db: db, store: store, clock: clk}
}

// layouts are both item layouts, row first.
var layouts = []family.Layout{family.LayoutRow, family.LayoutMap}

// layoutConfigs returns cfg once for each layout, its tables those tables
// makes for the layout: a table whose layout changes is one that the
// configurations give different layouts.
func layoutConfigs(cfg family.Schema, tables func(kind family.Layout) map[string]family.Table) map[family.Layout]family.Schema {
	out := map[family.Layout]family.Schema{}
	for _, kind := range layouts {
		c := cfg
		c.Tables = tables(kind)
		out[kind] = c
	}
	return out
}

func ev(t time.Time, series string, fields map[string]any) event.Event {
	return event.Event{Time: t.UTC(), Series: series, Fields: fields}
}

func num(v int) json.Number { return json.Number(fmt.Sprint(v)) }

var apr10 = time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)

func queryAll(t *testing.T, db *engine.DB, tenant string, q engine.Query) []event.Event {
	t.Helper()
	var out []event.Event
	for range 10000 {
		p, err := db.Query(context.Background(), tenant, q)
		require.NoError(t, err)
		out = append(out, p.Events...)
		if p.NextCursor == "" {
			return out
		}
		q.Cursor = p.NextCursor
	}
	t.Fatal("cursor walk did not end")
	return nil
}

func TestWriteAndQuery(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10.Add(time.Hour))
		ctx := context.Background()
		events := []event.Event{
			ev(apr10.Add(2*time.Second), "car-17", map[string]any{"speed": json.Number("88.5"), "gear": "D"}),
			ev(apr10, "car-17", map[string]any{"speed": num(10)}),
			ev(apr10.Add(time.Second+123456*time.Nanosecond), "car-18", map[string]any{"on": true, "tags": []any{"a", nil}}),
		}
		n, err := f.db.Write(ctx, "acme", "a_table", events)
		require.NoError(t, err)
		require.Equal(t, 3, n)

		got := queryAll(t, f.db, "acme", engine.Query{Table: "a_table", From: apr10, To: apr10.Add(2 * time.Second)})
		require.Len(t, got, 3)
		require.True(t, got[0].Time.Equal(apr10))
		require.Equal(t, "car-18", got[1].Series)
		require.Equal(t, apr10.Add(time.Second+123456*time.Nanosecond), got[1].Time)
		require.Equal(t, map[string]any{"on": true, "tags": []any{"a", nil}}, got[1].Fields)
		require.Equal(t, map[string]any{"speed": json.Number("88.5"), "gear": "D"}, got[2].Fields)
		for _, e := range got {
			require.NotEmpty(t, e.ID)
		}

		// Bounds are inclusive at both ends and exact to the nanosecond.
		got = queryAll(t, f.db, "acme", engine.Query{Table: "a_table", From: apr10.Add(time.Nanosecond), To: apr10.Add(2*time.Second - time.Nanosecond)})
		require.Len(t, got, 1)

		// One series; descending; projection.
		got = queryAll(t, f.db, "acme", engine.Query{Table: "a_table", Series: "car-17", From: apr10, To: apr10.Add(time.Hour), Desc: true, Fields: []string{"gear"}})
		require.Len(t, got, 2)
		require.Equal(t, map[string]any{"gear": "D"}, got[0].Fields)
		require.Empty(t, got[1].Fields)
	})
}

func TestRetryWritesNothingTwice(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 4, apr10)
		ctx := context.Background()
		batch := func() []event.Event {
			var evs []event.Event
			for i := range 50 {
				evs = append(evs, ev(apr10.Add(time.Duration(i%5)*time.Millisecond), fmt.Sprint("s", i%3), map[string]any{"i": num(i)}))
			}
			evs = append(evs, event.Event{Time: apr10, ID: "client-id", Fields: map[string]any{"x": num(1)}})
			// The same event twice in one request is one event.
			evs = append(evs, evs[0])
			return evs
		}
		for range 3 {
			_, err := f.db.Write(ctx, "acme", "t", batch())
			require.NoError(t, err)
		}
		got := queryAll(t, f.db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Second)})
		require.Len(t, got, 51)
	})
}

func TestLateDataLandsInItsPeriodAndWriteMonth(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
		f := open(t, b, 1, now)
		ctx := context.Background()
		_, err := f.db.Write(ctx, "acme", "cars", []event.Event{
			ev(apr10, "car-17", map[string]any{"v": num(1)}),
			ev(now, "car-17", map[string]any{"v": num(2)}),
		})
		require.NoError(t, err)
		tables, err := f.db.Tables(ctx)
		require.NoError(t, err)
		var names []string
		for _, tb := range tables {
			names = append(names, strings.TrimPrefix(tb.Name, f.prefix))
			require.Equal(t, "2017-06", tb.WriteMonth)
		}
		// Fineo's names: the week of 2017-04-09 (a Sunday), written in June.
		require.Equal(t, []string{"1491696000000_1492300799000_6_2017", "1497139200000_1497743999000_6_2017"}, names)

		got := queryAll(t, f.db, "acme", engine.Query{Table: "cars", From: apr10.Add(-time.Hour), To: apr10.Add(time.Hour)})
		require.Len(t, got, 1)
	})
}

func TestRetryAcrossMonthBoundaryIsReturnedOnce(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		// Week of Sunday 2017-04-30 spans April and May.
		at := time.Date(2017, 4, 30, 23, 59, 0, 0, time.UTC)
		f := open(t, b, 2, at)
		ctx := context.Background()
		batch := []event.Event{ev(at, "s", map[string]any{"v": num(1)}), ev(at.Add(time.Second), "s", map[string]any{"v": num(2)})}
		_, err := f.db.Write(ctx, "acme", "t", slices.Clone(batch))
		require.NoError(t, err)
		f.clock.Set(time.Date(2017, 5, 1, 0, 1, 0, 0, time.UTC))
		_, err = f.db.Write(ctx, "acme", "t", slices.Clone(batch))
		require.NoError(t, err)

		tables, err := f.db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 2, "one table per write month")
		for _, desc := range []bool{false, true} {
			for _, limit := range []int{1, 2, 10} {
				got := queryAll(t, f.db, "acme", engine.Query{Table: "t", From: at, To: at.Add(time.Hour), Desc: desc, Limit: limit})
				require.Len(t, got, 2, "desc=%v limit=%d", desc, limit)
			}
		}
	})
}

func TestCursorWalkReturnsEveryEventOnce(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		// Ten days across a week and a month boundary.
		start := time.Date(2017, 4, 25, 0, 0, 0, 0, time.UTC)
		f := open(t, b, 3, start)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 2))
		var all []event.Event
		// Two weeks, written over two write months, several series, many
		// events sharing an instant.
		for day := 0; day < 10; day++ {
			f.clock.Set(start.Add(time.Duration(day) * 24 * time.Hour))
			var batch []event.Event
			for i := 0; i < 15; i++ {
				at := start.Add(time.Duration(day)*24*time.Hour + time.Duration(rng.IntN(4))*time.Hour)
				batch = append(batch, ev(at, fmt.Sprint("dev-", rng.IntN(4)), map[string]any{"day": num(day), "i": num(i)}))
			}
			_, err := f.db.Write(ctx, "acme", "t", batch)
			require.NoError(t, err)
			all = append(all, batch...)
		}
		key := func(e event.Event) string { return fmt.Sprint(e.Time.UnixNano(), "/", e.ID, "/", e.Series) }
		want := map[string]bool{}
		for _, e := range all {
			want[key(e)] = true
		}
		from, to := start, start.Add(10*24*time.Hour)
		limits := []int{1, 7, 1000}
		if b.Name != "pebble" {
			// A page of one costs a request per partition on DynamoDB.
			limits = []int{7, 1000}
		}
		for _, series := range []string{"", "dev-2"} {
			for _, desc := range []bool{false, true} {
				for _, limit := range limits {
					got := queryAll(t, f.db, "acme", engine.Query{Table: "t", Series: series, From: from, To: to, Desc: desc, Limit: limit})
					seen := map[string]bool{}
					for i, e := range got {
						require.False(t, seen[key(e)], "repeated %s", key(e))
						seen[key(e)] = true
						if i > 0 {
							c := got[i-1].Time.Compare(e.Time)
							if desc {
								require.GreaterOrEqual(t, c, 0)
							} else {
								require.LessOrEqual(t, c, 0)
							}
						}
					}
					n := 0
					for k := range want {
						if series == "" || containsSeries(all, k, series, key) {
							n++
							require.True(t, seen[k], "missing %s (series %q desc %v limit %d)", k, series, desc, limit)
						}
					}
					require.Len(t, got, n)
				}
			}
		}
	})
}

func containsSeries(all []event.Event, k, series string, key func(event.Event) string) bool {
	for _, e := range all {
		if key(e) == k {
			return e.Series == series
		}
	}
	return false
}

func TestBadInputWritesNothing(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		_, err := f.db.Write(ctx, "acme", "t", []event.Event{
			ev(apr10, "ok", map[string]any{"v": num(1)}),
			ev(apr10, "bad", map[string]any{"pk": num(1)}),
			ev(apr10.Add(100*24*time.Hour), "future", nil),
			ev(apr10, "huge", map[string]any{"blob": string(make([]byte, 410*1024))}),
		})
		var be *event.BatchError
		require.ErrorAs(t, err, &be)
		var idx []int
		for _, p := range be.Problems {
			idx = append(idx, p.Index)
		}
		require.Equal(t, []int{1, 2, 3}, idx)
		_, err = f.db.Query(ctx, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
		require.ErrorIs(t, err, engine.ErrUnknownTable)
		tables, err := f.db.Tables(ctx)
		require.NoError(t, err)
		require.Empty(t, tables)

		_, err = f.db.Write(ctx, "acme", "no#hash", []event.Event{ev(apr10, "", nil)})
		require.ErrorIs(t, err, engine.ErrBadTableName)
	})
}

func TestTenantsAreIsolated(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		_, err := f.db.Write(ctx, "a", "t", []event.Event{ev(apr10, "s", map[string]any{"owner": "a"})})
		require.NoError(t, err)
		_, err = f.db.Query(ctx, "b", engine.Query{Table: "t", From: apr10, To: apr10})
		require.ErrorIs(t, err, engine.ErrUnknownTable)
		_, err = f.db.Write(ctx, "b", "t", []event.Event{ev(apr10, "s", map[string]any{"owner": "b"})})
		require.NoError(t, err)
		_, err = f.db.Write(ctx, "a", "u", []event.Event{ev(apr10, "s", nil)})
		require.NoError(t, err)
		for tenant, want := range map[string][]string{"a": {"t", "u"}, "b": {"t"}, "c": nil} {
			tables, err := f.db.LogicalTables(ctx, tenant)
			require.NoError(t, err)
			var names []string
			for _, lt := range tables {
				names = append(names, lt.Name)
			}
			require.Equal(t, want, names, "tenant %s", tenant)
		}
		for _, tenant := range []string{"a", "b"} {
			got := queryAll(t, f.db, tenant, engine.Query{Table: "t", From: apr10, To: apr10})
			require.Len(t, got, 1)
			require.Equal(t, tenant, got[0].Fields["owner"])
		}
	})
}

func TestBadQueries(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		_, err := f.db.Write(ctx, "a", "t", []event.Event{ev(apr10, "s", nil), ev(apr10.Add(time.Second), "s", nil)})
		require.NoError(t, err)
		_, err = f.db.Query(ctx, "a", engine.Query{Table: "t", From: apr10.Add(time.Second), To: apr10})
		require.ErrorIs(t, err, engine.ErrBadQuery)
		require.ErrorContains(t, err, "inverted range")
		_, err = f.db.Query(ctx, "a", engine.Query{Table: "t", From: apr10, To: apr10, Limit: 1 << 30})
		require.ErrorIs(t, err, engine.ErrBadQuery)
		p, err := f.db.Query(ctx, "a", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Second), Limit: 1})
		require.NoError(t, err)
		require.NotEmpty(t, p.NextCursor)
		_, err = f.db.Query(ctx, "a", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Second), Cursor: tamper(p.NextCursor)})
		require.ErrorIs(t, err, engine.ErrBadCursor)
		_, err = f.db.Query(ctx, "b", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Second), Cursor: p.NextCursor})
		require.Error(t, err)
	})
}

func TestConcurrentWritersCreateALateTableOnce(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		now := time.Date(2017, 9, 1, 0, 0, 0, 0, time.UTC)
		f := open(t, b, 2, now)
		ctx := context.Background()
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				var batch []event.Event
				for i := range 100 {
					batch = append(batch, ev(apr10.Add(time.Duration(i)*time.Millisecond), fmt.Sprint("w", w), map[string]any{"i": num(i)}))
				}
				_, err := f.db.Write(ctx, "acme", "t", batch)
				require.NoError(t, err)
			})
		}
		wg.Wait()
		tables, err := f.db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		got := queryAll(t, f.db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Second)})
		require.Len(t, got, 800)
	})
}

func TestCloseWaitsAndRefuses(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		require.NoError(t, f.db.Close())
		require.NoError(t, f.db.Close())
		_, err := f.db.Write(context.Background(), "a", "t", []event.Event{ev(apr10, "", nil)})
		require.ErrorIs(t, err, engine.ErrClosed)
	})
}

// tamper changes one character of a cursor.
func tamper(c string) string {
	b := []byte(c)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestTablesDeletedBehindTheEnginesBack(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 1, apr10)
		ctx := context.Background()
		_, err := f.db.Write(ctx, "acme", "t", []event.Event{ev(apr10, "s", map[string]any{"v": num(1)})})
		require.NoError(t, err)
		tables, err := f.db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		// The lifecycle manager (another process) deletes the table.
		require.NoError(t, backends.Drop(ctx, f.store, tables[0].Name))

		got := queryAll(t, f.db, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
		require.Empty(t, got, "a deleted table reads as empty, not as an error")
		_, err = f.db.Write(ctx, "acme", "t", []event.Event{ev(apr10, "s", map[string]any{"v": num(2)})})
		require.NoError(t, err, "a write makes the table again")
		got = queryAll(t, f.db, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
		require.Len(t, got, 1)
		require.Equal(t, num(2), got[0].Fields["v"])
	})
}

func TestTTLAttribute(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].TTL = 90 * 24 * time.Hour
		cfg.Families[0].Layout = family.LayoutRow // a chunk's expiry: TestChunkTTL
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10)})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()
		_, err = db.Write(ctx, "acme", "t", []event.Event{{Time: apr10, Series: "s", ID: "e1", Fields: map[string]any{"v": num(1)}}})
		require.NoError(t, err)
		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		info, err := store.DescribeTable(ctx, tables[0].Name)
		require.NoError(t, err)
		require.Equal(t, "tt_expires", info.TTLAttribute)
		item, err := store.GetItem(ctx, tables[0].Name, "acme#t#s#0", "2017-04-10T12:00:00.000000000Z#e1")
		require.NoError(t, err)
		require.Equal(t, json.Number(fmt.Sprint(apr10.Add(90*24*time.Hour).Unix())), item.Attrs["tt_expires"])
		// Queries return the event's own fields only.
		got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
		require.Equal(t, map[string]any{"v": num(1)}, got[0].Fields)
		// Even when asked for by name, and by an aggregate, which reads
		// only the fields it summarises.
		got = queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10, Fields: []string{"v", "tt_expires"}})
		require.Equal(t, map[string]any{"v": num(1)}, got[0].Fields)
		bs, err := db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "t", From: apr10, To: apr10, Bucket: time.Hour, Fields: []string{"tt_expires"}, Funcs: []string{engine.FnCount}})
		require.NoError(t, err)
		require.Len(t, bs, 1)
		require.Equal(t, int64(1), bs[0].Events)
		require.Empty(t, bs[0].Values["tt_expires"], "no event has the field")
	})
}
