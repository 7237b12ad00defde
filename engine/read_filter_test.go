package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// itemCounter counts the items the store's queries return: what a
// pushed-down filter saves.
type itemCounter struct {
	storage.Store
	items atomic.Int64
}

func (s *itemCounter) Query(ctx context.Context, q storage.Query) storage.Iterator {
	return &itemCountingIterator{Iterator: s.Store.Query(ctx, q), n: &s.items}
}

type itemCountingIterator struct {
	storage.Iterator
	n *atomic.Int64
}

func (it *itemCountingIterator) Next() bool {
	ok := it.Iterator.Next()
	if ok {
		it.n.Add(1)
	}
	return ok
}

// A filtered query returns exactly the events the filter matches, in
// order, each once, through cursors of small pages, on both layouts and
// every backend; a filtered aggregate summarises the same events; and on
// the row layout the store, not the engine, drops the others.
func TestFilteredQueryIsTheFilteredMerge(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		inner, cfg := b.Open(t)
		store := &itemCounter{Store: inner}
		cfg.Families[0].Shards = 2
		// Table r's rows are in row-layout tables, whose reads the
		// store filters (a chunk-layout table's it does not).
		cfg.Families[0].Layout = family.LayoutRow
		cfg.Tables = map[string]family.Table{"m": {Family: cfg.Families[0].Name, Layout: family.LayoutMap}}
		start := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
		clk := clock.NewManual(start.Add(48 * time.Hour))
		db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()

		rng := rand.New(rand.NewPCG(5, 6))
		levels := []string{"ERROR", "INFO", "WARN"}
		var written []event.Event
		for i := range 300 {
			at := start.Add(time.Duration(rng.IntN(20)) * time.Hour).Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			fields := map[string]any{"level": levels[rng.IntN(3)], "temp": num(rng.IntN(50)), "msg": fmt.Sprintf("disk %d", i%4)}
			if i%5 == 0 {
				delete(fields, "temp")
			}
			written = append(written, ev(at, fmt.Sprintf("s%d", rng.IntN(8)), fields))
		}
		for _, table := range []string{"r", "m"} {
			_, err := db.Write(ctx, "acme", table, slices.Clone(written))
			require.NoError(t, err)
		}
		// The merge of everything written, per table (ids hash the
		// table's name).
		all := map[string][]event.Event{}
		for _, table := range []string{"r", "m"} {
			all[table] = queryAll(t, db, "acme", engine.Query{Table: table, From: start, To: start.Add(24 * time.Hour), Limit: 1000})
			require.Len(t, all[table], len(written))
		}

		// Small pages, so that a page ends between the events of one
		// millisecond; larger on DynamoDB, where a page costs a request
		// per series and shard.
		limit := 7
		if b.Name != "pebble" {
			limit = 25
		}
		for _, text := range []string{
			`level = "ERROR"`,
			`level = "ERROR" and temp > 30`,
			`not exists(temp) or begins_with(msg, "disk 1")`,
			`temp >= 49`,
			`level = "NONE"`,
		} {
			f, err := filter.Parse(text)
			require.NoError(t, err)
			for _, table := range []string{"r", "m"} {
				var want []event.Event
				for _, e := range all[table] {
					if f.Match(e.Fields) {
						want = append(want, e)
					}
				}
				for _, desc := range []bool{false, true} {
					for _, series := range []string{"", "s3"} {
						name := fmt.Sprintf("%s/%s/desc=%v/series=%q", text, table, desc, series)
						exp := want
						if series != "" {
							exp = slices.DeleteFunc(slices.Clone(exp), func(e event.Event) bool { return e.Series != series })
						}
						if desc {
							exp = slices.Clone(exp)
							slices.Reverse(exp)
						}
						q := engine.Query{Table: table, Series: series, From: start, To: start.Add(24 * time.Hour), Desc: desc, Limit: limit, Filter: f}
						got := queryAll(t, db, "acme", q)
						require.Equal(t, eventKeys(exp), eventKeys(got), name)
						if desc {
							continue
						}

						// The projection leaves out the fields the filter
						// read.
						q.Fields = []string{"level"}
						for _, e := range queryAll(t, db, "acme", q) {
							for k := range e.Fields {
								require.Equal(t, "level", k, name)
							}
						}
					}
				}
				counts, err := db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: table, From: start, To: start.Add(24 * time.Hour), Bucket: 24 * time.Hour, Funcs: []string{engine.FnCount}, Filter: f})
				require.NoError(t, err)
				total := 0
				for _, bk := range counts {
					total += int(bk.Events)
				}
				require.Equal(t, len(want), total, "%s/%s aggregate", text, table)
			}
		}

		// On the row layout the store drops what the filter does not
		// match: a query of one rare level reads a fraction of the items.
		read := func(table, text string) int64 {
			var f *storage.Filter
			if text != "" {
				f, err = filter.Parse(text)
				require.NoError(t, err)
			}
			before := store.items.Load()
			queryAll(t, db, "acme", engine.Query{Table: table, From: start, To: start.Add(24 * time.Hour), Limit: 1000, Filter: f})
			return store.items.Load() - before
		}
		rare := `temp >= 48`
		require.Less(t, read("r", rare)*4, read("r", ""), "row layout: pushed down")

		// A cursor of one filter does not serve another.
		f1, _ := filter.Parse(`level = "ERROR"`)
		f2, _ := filter.Parse(`level = "INFO"`)
		p, err := db.Query(ctx, "acme", engine.Query{Table: "r", From: start, To: start.Add(24 * time.Hour), Limit: 2, Filter: f1})
		require.NoError(t, err)
		require.NotEmpty(t, p.NextCursor)
		_, err = db.Query(ctx, "acme", engine.Query{Table: "r", From: start, To: start.Add(24 * time.Hour), Limit: 2, Filter: f2, Cursor: p.NextCursor})
		require.ErrorIs(t, err, engine.ErrBadCursor)

		// Filters the stores would refuse are a bad query.
		for _, bad := range []*storage.Filter{
			{Op: storage.FilterEq, Attr: "tt_ids", Value: "x"},
			{Op: storage.FilterLt, Attr: "temp", Value: true},
		} {
			_, err := db.Query(ctx, "acme", engine.Query{Table: "r", From: start, To: start.Add(time.Hour), Filter: bad})
			require.ErrorIs(t, err, engine.ErrBadQuery)
		}
	})
}

// eventKeys names events by series, id and time.
func eventKeys(events []event.Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, e.Series+"/"+e.ID+"/"+e.Time.Format(time.RFC3339Nano))
	}
	return out
}
