package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// openLayout opens an engine on a new store of backend b whose default
// family has the given layout (a chunk window of an hour), and returns
// it with the store and the family's table prefix.
func openLayout(t *testing.T, b backends.Backend, kind family.Layout, shards int, now time.Time) *fixture {
	t.Helper()
	store, cfg := b.Open(t)
	cfg.Families[0].Layout = kind
	cfg.Families[0].ChunkWindow = time.Hour
	cfg.Families[0].Shards = shards
	clk := clock.NewManual(now)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return &fixture{prefix: cfg.Families[0].Prefix, db: db, store: store, clock: clk}
}

// edgeEvents are the events whose read-back the row layout promises:
// NUL bytes, every value type, integers and decimals at their limits,
// fields that come and go and change type, client ids, 1,000-field
// events, 50 distinct events at one instant, and events at both ends
// of a chunk window, over three series and two windows.
func edgeEvents() []event.Event {
	n := func(s string) json.Number { return json.Number(s) }
	at := func(d time.Duration) time.Time { return apr10.Add(d) }
	thousand := map[string]any{}
	wide := map[string]any{}
	for i := range 1000 {
		thousand[fmt.Sprintf("f%04d", i)] = n(fmt.Sprint(i * 7))
		switch i % 4 {
		case 0:
			wide[fmt.Sprintf("w%d", i)] = fmt.Sprintf("v\x00%d", i)
		case 1:
			wide[fmt.Sprintf("w%d", i)] = i%3 == 0
		case 2:
			wide[fmt.Sprintf("w%d", i)] = n(fmt.Sprintf("%d.25", i))
		default:
			wide[fmt.Sprintf("w%d", i)] = nil
		}
	}
	evs := []event.Event{
		{Time: at(0), Series: "a", Fields: map[string]any{"s": "nul\x00inside\x00", "empty": "", "u": "é😀"}},
		{Time: at(0), Series: "a", Fields: map[string]any{"b": true, "c": false}},
		{Time: at(0), Series: "a", Fields: map[string]any{"i": n("-9223372036854775808"), "j": n("9223372036854775807")}},
		{Time: at(0), Series: "a", Fields: map[string]any{"big": n("99999999999999999999999999999999999999"), "tiny": n("0.00000000000000000000000000000000000001")}},
		{Time: at(0), Series: "a", Fields: map[string]any{"f": n("0.1"), "g": n("-2.5"), "h": n("1e21"), "z": n("0")}},
		{Time: at(0), Series: "a", Fields: map[string]any{"n": nil}},
		{Time: at(0), Series: "a"},
		{Time: at(0), Series: "a", ID: "client-1", Fields: map[string]any{"v": n("1")}},
		{Time: at(0), Series: "a", ID: "client-2", Fields: map[string]any{"v": n("1")}},
		{Time: at(time.Second), Series: "a", Fields: map[string]any{"nested": map[string]any{"a": []any{n("1"), "x", nil, true, map[string]any{}}, "e": []any{}}}},
		{Time: at(2 * time.Second), Series: "b", Fields: thousand},
		{Time: at(3 * time.Second), Series: "b", Fields: wide},
		{Time: at(4 * time.Second), Series: "b", Fields: map[string]any{"mixed": n("1"), "v": n("3")}},
		{Time: at(5 * time.Second), Series: "b", Fields: map[string]any{"mixed": "one", "v": n("4.5")}},
		{Time: at(6 * time.Second), Series: "b", Fields: map[string]any{"mixed": n("12345678901234567890.5"), "v": n("-1")}},
		{Time: at(time.Hour - 1), Series: "c", Fields: map[string]any{"late": n("3"), "v": n("7")}},
		{Time: at(time.Hour), Series: "c", Fields: map[string]any{"next": n("4"), "v": n("8")}},
		{Time: at(time.Hour + time.Minute), Series: "a", Fields: map[string]any{"v": n("9"), "tag": "x"}},
	}
	for i := range 50 {
		evs = append(evs, event.Event{Time: at(7 * time.Second), Series: "c", Fields: map[string]any{"v": n(fmt.Sprint(i)), "tag": "same"}})
	}
	for i := range 60 {
		evs = append(evs, event.Event{Time: at(time.Duration(i) * time.Minute), Series: "d", Fields: map[string]any{"v": n(fmt.Sprint(i)), "even": i%2 == 0}})
	}
	return evs
}

// queries are reads of every kind over the edge events: both orders,
// small pages (cursors resuming inside a chunk), one series, filters,
// projections, a range starting inside a window, and the latest events.
func chunkQueries(t *testing.T) []engine.Query {
	f, err := filter.Parse(`v > 3`)
	require.NoError(t, err)
	g, err := filter.Parse(`even = true`)
	require.NoError(t, err)
	from, to := apr10.Add(-time.Hour), apr10.Add(3*time.Hour)
	return []engine.Query{
		{Table: "t", From: from, To: to, Limit: 1000},
		{Table: "t", From: from, To: to, Limit: 19},
		{Table: "t", From: from, To: to, Limit: 23, Desc: true},
		{Table: "t", Series: "a", From: from, To: to, Limit: 3},
		{Table: "t", Series: "d", From: from, To: to, Limit: 10, Desc: true},
		{Table: "t", Series: "c", From: apr10.Add(7 * time.Second), To: apr10.Add(7 * time.Second), Limit: 33},
		{Table: "t", From: apr10.Add(30*time.Minute + time.Nanosecond), To: apr10.Add(90 * time.Minute), Limit: 5},
		{Table: "t", From: from, To: to, Limit: 11, Filter: f},
		{Table: "t", Series: "d", From: from, To: to, Limit: 4, Filter: g, Fields: []string{"v"}},
		{Table: "t", From: from, To: to, Limit: 50, Fields: []string{"v", "tag"}},
	}
}

// TestChunkLayoutReadsAsRows writes the edge events to a table of the
// chunk layout and to one of the row layout, and requires every read of
// both, page by page, to be the same: ids, times, series and fields,
// exactly. Writing the request again, and writing it again joined with
// other events (its chunks then differ from the first's), stores no
// event twice. On every backend.
func TestChunkLayoutReadsAsRows(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		rows := openLayout(t, b, family.LayoutRow, 1, apr10.Add(2*time.Hour))
		chunks := openLayout(t, b, family.LayoutChunk, 2, apr10.Add(2*time.Hour))
		evs := edgeEvents()
		_, err := rows.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)
		_, err = chunks.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)

		// The chunk table holds a chunk per series and window (and its
		// series index), not an item per event.
		items := tableItems(t, chunks.store, chunks.prefix)
		n := 0
		for _, it := range items {
			if strings.Contains(it.PK, "#t#") || chunk.IsSortKey(it.SK) {
				require.True(t, chunk.IsSortKey(it.SK), "an event item of the chunk table is a chunk: %q %q", it.PK, it.SK)
				n++
			}
		}
		require.Equal(t, 6, n, "a chunk per series and window: a, b, c, d in the first hour; a, c in the second")

		compare := func(stage string, which ...int) {
			for i, q := range chunkQueries(t) {
				if which != nil && !slices.Contains(which, i) {
					continue
				}
				want := pages(t, rows.db, q)
				got := pages(t, chunks.db, q)
				requireSamePages(t, want, got, fmt.Sprintf("%s: query %d", stage, i))
			}
		}
		compare("first write")
		all := queryAll(t, chunks.db, "acme", engine.Query{Table: "t", From: apr10.Add(-time.Hour), To: apr10.Add(3 * time.Hour)})
		require.Len(t, all, len(evs))

		// A retry writes the very items.
		_, err = chunks.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)
		require.Len(t, tableItems(t, chunks.store, chunks.prefix), len(items), "a retry writes the items it wrote")
		compare("retry", 0, 2)

		// A retry joined with other events makes other chunks, which
		// hold the retried events again: reads still return each once.
		more := append(slices.Clone(evs[:30]), event.Event{Time: apr10.Add(9 * time.Second), Series: "a", Fields: map[string]any{"v": json.Number("100")}})
		_, err = chunks.db.Write(ctx, "acme", "t", more)
		require.NoError(t, err)
		_, err = rows.db.Write(ctx, "acme", "t", more)
		require.NoError(t, err)
		require.Greater(t, len(tableItems(t, chunks.store, chunks.prefix)), len(items))
		compare("joined retry", 0, 2, 5)
	})
}

// pages reads every page of q and returns the events of each page.
func pages(t *testing.T, db *engine.DB, q engine.Query) [][]event.Event {
	t.Helper()
	var out [][]event.Event
	for range 1000 {
		p, err := db.Query(context.Background(), "acme", q)
		require.NoError(t, err)
		out = append(out, p.Events)
		if p.NextCursor == "" {
			return out
		}
		q.Cursor = p.NextCursor
	}
	t.Fatal("cursor walk did not end")
	return nil
}

// tableItems returns every item of the tables whose names start with
// prefix.
func tableItems(t *testing.T, store storage.Store, prefix string) []storage.Item {
	t.Helper()
	ctx := context.Background()
	var names []string
	require.NoError(t, store.ListTables(ctx, "", func(name string) bool {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
		return true
	}))
	var out []storage.Item
	for _, name := range names {
		it := store.Scan(ctx, name)
		for it.Next() {
			out = append(out, it.Item())
		}
		require.NoError(t, it.Close())
	}
	return out
}

// requireSamePages requires two reads' pages to be the same, naming the
// first event that differs rather than printing them all.
func requireSamePages(t *testing.T, want, got [][]event.Event, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: pages", what)
	for p := range want {
		require.Equal(t, len(want[p]), len(got[p]), "%s: events of page %d", what, p)
		for i := range want[p] {
			w, g := want[p][i], got[p][i]
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("%s: page %d, event %d:\nwant %s %q %q %.300v\ngot  %s %q %q %.300v", what, p, i, w.Time, w.Series, w.ID, w.Fields, g.Time, g.Series, g.ID, g.Fields)
			}
		}
	}
}

// TestChunkLayoutMixedWithRows reads tables of both layouts, and a
// table holding chunks and rows, as rows alone: a week's table made
// while the family was of the row layout keeps rows when the family
// turns to chunks; the next week's table is made of chunks; then the
// family turns back to rows, and that table takes rows beside its chunks,
// some of them events its chunks hold already. Every query and
// aggregate answers as a store of rows alone does.
func TestChunkLayoutMixedWithRows(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		week := 7 * 24 * time.Hour
		now := apr10.Add(2 * time.Hour)
		rows := openLayout(t, b, family.LayoutRow, 1, now)
		store, cfg := b.Open(t)
		reopen := func(kind family.Layout) *engine.DB {
			c := cfg
			c.Families = slices.Clone(cfg.Families)
			c.Families[0].Layout, c.Families[0].ChunkWindow = kind, time.Hour
			db, err := engine.Open(ctx, store, engine.Options{Schema: c, Clock: rows.clock})
			require.NoError(t, err)
			return db
		}
		write := func(db *engine.DB, evs []event.Event) {
			t.Helper()
			_, err := db.Write(ctx, "acme", "t", slices.Clone(evs))
			require.NoError(t, err)
			_, err = rows.db.Write(ctx, "acme", "t", slices.Clone(evs))
			require.NoError(t, err)
		}
		evs := edgeEvents()
		later := make([]event.Event, len(evs))
		for i, e := range evs {
			e.Time = e.Time.Add(week)
			later[i] = e
		}

		db := reopen(family.LayoutRow)
		write(db, evs[:60])
		require.NoError(t, db.Close())

		db = reopen(family.LayoutChunk)
		write(db, evs[60:]) // into the row table made before: rows
		rows.clock.Set(now.Add(week))
		write(db, later[:90]) // a new table: chunks
		require.NoError(t, db.Close())

		db = reopen(family.LayoutRow)
		defer db.Close()
		write(db, later[60:]) // rows beside the chunks, 30 of them held already

		var chunkItems, rowItems int
		for _, it := range tableItems(t, store, cfg.Families[0].Prefix) {
			switch {
			case chunk.IsSortKey(it.SK):
				chunkItems++
			case strings.Contains(it.PK, "#t#"):
				rowItems++
			}
		}
		require.Positive(t, chunkItems)
		require.Equal(t, len(evs)+len(later)-60, rowItems, "rows: the first week's, and the second's written after the family turned back")

		from, to := apr10.Add(-time.Hour), apr10.Add(week+3*time.Hour)
		for i, q := range chunkQueries(t) {
			if i == 1 || i == 8 {
				continue // a week apart, these ask nothing the others do not
			}
			q.From, q.To = from, to
			requireSamePages(t, pages(t, rows.db, q), pages(t, db, q), fmt.Sprintf("query %d", i))
		}
		all := queryAll(t, db, "acme", engine.Query{Table: "t", From: from, To: to})
		require.Len(t, all, len(evs)+len(later), "each event once")

		for i, q := range []engine.AggregateQuery{
			{Table: "t", From: from, To: to, Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{engine.FnCount, engine.FnSum, engine.FnMin, engine.FnMax, engine.FnAvg, engine.FnFirst, engine.FnLast}},
			{Table: "t", Series: "d", From: from, To: to, Bucket: 10 * time.Minute, Fields: []string{"v"}, Funcs: []string{engine.FnSum, engine.FnP50}},
			{Table: "t", From: from, To: to, Bucket: 24 * time.Hour, Funcs: []string{engine.FnCount}},
		} {
			want, err := rows.db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			got, err := db.Aggregate(ctx, "acme", q)
			require.NoError(t, err)
			require.Equal(t, want, got, "aggregate %d", i)
			require.NotEmpty(t, got)
		}
		q := engine.AggregateQuery{Table: "t", From: from, To: to, Bucket: 24 * time.Hour, Fields: []string{"v"}, Funcs: []string{engine.FnSum, engine.FnCount}, GroupBy: engine.GroupBySeries}
		want, err := rows.db.AggregateGroups(ctx, "acme", q)
		require.NoError(t, err)
		got, err := db.AggregateGroups(ctx, "acme", q)
		require.NoError(t, err)
		require.Equal(t, want, got, "grouped by series")
	})
}

// TestChunksStayUnderTheItemLimit writes a series' window of events
// that no one item can hold: they go into several chunks, each within
// DynamoDB's 400 KB as storage.ItemSize counts it, and read back whole.
func TestChunksStayUnderTheItemLimit(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		f := openLayout(t, b, family.LayoutChunk, 1, apr10.Add(2*time.Hour))
		r := rand.New(rand.NewPCG(1, 2))
		var evs []event.Event
		for i := range 400 {
			noise := make([]byte, 3000)
			for j := range noise {
				noise[j] = byte('a' + r.IntN(26))
			}
			evs = append(evs, event.Event{Time: apr10.Add(time.Duration(i) * time.Second), Series: "s", Fields: map[string]any{"noise": string(noise), "v": json.Number(fmt.Sprint(i))}})
		}
		_, err := f.db.Write(ctx, "acme", "t", slices.Clone(evs))
		require.NoError(t, err)
		n := 0
		for _, it := range tableItems(t, f.store, f.prefix) {
			if chunk.IsSortKey(it.SK) {
				n++
				require.LessOrEqual(t, storage.ItemSize(it), storage.MaxItemSize)
			}
		}
		require.GreaterOrEqual(t, n, 3, "1.2 MB of events, as incompressible as text of 26 letters gets, in 400 KB items")
		got := queryAll(t, f.db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Hour), Limit: 100})
		require.Len(t, got, len(evs))
		for i, e := range got {
			require.Equal(t, evs[i].Fields, e.Fields)
		}
	})
}

// A chunk-layout write that stores some of its chunks names as unwritten
// every event of the chunks it did not store, and only those; the
// request written again stores each event once.
func TestChunkPartialWriteNamesTheUnwrittenEvents(t *testing.T) {
	inner, cfg := backends.Pebble().Open(t)
	cfg.Families[0].Layout = family.LayoutChunk
	store := &halfStore{Store: inner}
	store.failing.Store(true)
	ctx := context.Background()
	db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	var evs []event.Event
	for i := range 40 {
		evs = append(evs, ev(apr10.Add(time.Duration(i)*time.Second), fmt.Sprintf("s%d", i%4), map[string]any{"i": num(i)}))
	}
	evs = append(evs, evs[10]) // a repeat: written or not with its chunk
	n, err := db.Write(ctx, "acme", "t", slices.Clone(evs))
	var we *engine.WriteError
	require.ErrorAs(t, err, &we)
	require.ErrorIs(t, err, errInjected)
	unwritten := map[int]bool{}
	for _, i := range we.Unwritten {
		unwritten[i] = true
	}
	require.Equal(t, len(evs)-len(we.Unwritten), n)
	require.Len(t, we.Unwritten, 21, "the events of two series' chunks, and the repeat of one of them")
	got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)})
	require.Len(t, got, 20, "the events of the two chunks stored")
	for _, e := range got {
		i, err := strconv.Atoi(string(e.Fields["i"].(json.Number)))
		require.NoError(t, err)
		require.False(t, unwritten[i], "event %d is stored, and was reported unwritten", i)
	}

	store.failing.Store(false)
	_, err = db.Write(ctx, "acme", "t", slices.Clone(evs))
	require.NoError(t, err)
	got = queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)})
	require.Len(t, got, 40, "every event once")
}

// A logical table of the map layout in a family of chunks writes map
// items into the chunk tables, and reads back as rows do.
func TestMapTableInAChunkFamily(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		ctx := context.Background()
		rows := openLayout(t, b, family.LayoutRow, 1, apr10.Add(2*time.Hour))
		store, cfg := b.Open(t)
		cfg.Families[0].Layout = family.LayoutChunk
		cfg.Tables = map[string]family.Table{"t": {Family: cfg.Families[0].Name, Layout: family.LayoutMap}}
		db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: rows.clock})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		var evs []event.Event
		for _, e := range edgeEvents() {
			if len(e.Fields) <= engine.MaxMapFields {
				evs = append(evs, e)
			}
		}
		for _, d := range []*engine.DB{rows.db, db} {
			_, err := d.Write(ctx, "acme", "t", slices.Clone(evs))
			require.NoError(t, err)
		}
		maps := 0
		for _, it := range tableItems(t, store, cfg.Families[0].Prefix) {
			require.False(t, chunk.IsSortKey(it.SK), "a map table writes no chunks")
			if strings.Contains(it.PK, "#t#") {
				maps++
			}
		}
		require.Positive(t, maps)
		for i, q := range chunkQueries(t) {
			requireSamePages(t, pages(t, rows.db, q), pages(t, db, q), fmt.Sprintf("query %d", i))
		}
	})
}

// TestChunkTTL writes a chunk family's events with a ttl and requires
// each chunk to expire when its newest event does (chunk.Expiry), the
// table to have TTL on the attribute where the store has TTL (recorded
// on Pebble and dynalite), and reads to return the events' own fields
// only. On every backend.
func TestChunkTTL(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		const ttl = 90 * 24 * time.Hour
		cfg.Families[0].Layout, cfg.Families[0].ChunkWindow, cfg.Families[0].TTL = family.LayoutChunk, time.Hour, ttl
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(3 * time.Hour))})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()
		var evs []event.Event
		for i := range 40 { // two windows of series a, one of b
			evs = append(evs, event.Event{Time: apr10.Add(time.Duration(i) * 179 * time.Second), Series: []string{"a", "b"}[i/30], Fields: map[string]any{"v": json.Number(strconv.Itoa(i))}})
		}
		_, err = db.Write(ctx, "acme", "t", evs)
		require.NoError(t, err)

		tables, err := db.Tables(ctx)
		require.NoError(t, err)
		require.Len(t, tables, 1)
		info, err := store.DescribeTable(ctx, tables[0].Name)
		require.NoError(t, err)
		require.Equal(t, family.TTLAttribute, info.TTLAttribute)
		chunks := 0
		for _, it := range tableItems(t, store, cfg.Families[0].Prefix) {
			if !chunk.IsSortKey(it.SK) {
				continue
			}
			chunks++
			in, err := chunk.Unpack(nil, it)
			require.NoError(t, err)
			newest := in[len(in)-1].Time
			require.Equal(t, json.Number(strconv.FormatInt(newest.Add(ttl).Unix(), 10)), it.Attrs[family.TTLAttribute],
				"a chunk expires when its newest event does, so none of its events expires early")
		}
		require.Equal(t, 3, chunks, "a chunk per series and window")

		got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(3 * time.Hour), Fields: []string{"v", family.TTLAttribute}})
		require.Len(t, got, len(evs))
		for _, ev := range got {
			require.Equal(t, []string{"v"}, slices.Collect(maps.Keys(ev.Fields)), "the expiry is no field")
		}
	})
}
