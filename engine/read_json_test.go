package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/internal/backends"
)

// QueryJSON writes, page by page, byte for byte the JSON that Query's
// events write, and the same cursors: on the row layout, the map layout
// and a table whose layout changed (rows and map items in the same
// milliseconds of the same partitions), of every series and of one, in
// either order, with fields, filters and both, on every backend. It
// keeps nothing of the store's buffers: it reads through a store that
// overwrites each view once it is no longer valid (poisoned).
func TestQueryJSONIsQuerysEventsAsJSON(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		cfg.Families[0].Shards = 2
		fam := cfg.Families[0].Name
		configs := layoutConfigs(cfg, func(kind family.Layout) map[string]family.Table {
			return map[string]family.Table{
				"r": {Family: fam, Layout: family.LayoutRow},
				"m": {Family: fam, Layout: family.LayoutMap},
				"t": {Family: fam, Layout: kind},
			}
		})
		ctx := context.Background()
		start := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
		clk := clock.NewManual(start.Add(48 * time.Hour))

		rng := rand.New(rand.NewPCG(7, 8))
		levels := []string{"ERROR", "INFO", "WARN"}
		var evs []event.Event
		for i := range 240 {
			// Few distinct milliseconds, so that events share them.
			at := start.Add(time.Duration(rng.IntN(6))*time.Hour + time.Duration(rng.IntN(3))*time.Millisecond + time.Duration(rng.IntN(2))*time.Microsecond)
			fields := map[string]any{
				"level": levels[rng.IntN(3)],
				"temp":  json.Number(fmt.Sprintf("%d.%d", rng.IntN(100)-50, rng.IntN(10))),
				"msg":   []string{"plain", "quote \" and \\ back", "tab\tline\nfeed", "héllo \u2028 wörld", "<&>", "\x01ctl"}[rng.IntN(6)],
			}
			switch i % 6 {
			case 0:
				delete(fields, "temp")
			case 1:
				fields["nested"] = map[string]any{"b": []any{true, nil, json.Number("1e3"), "x"}, "a": map[string]any{"z": false}}
			case 2:
				fields["raw"] = []byte{0, 1, 2, 250}
			case 3:
				fields = nil
			case 4:
				fields["ünï"] = "code"
				fields["Z"] = json.Number("-0.5")
			}
			e := ev(at, fmt.Sprintf("s%d", rng.IntN(5)), fields)
			if i%7 == 0 {
				e.ID = fmt.Sprintf("client-%d", i)
			}
			evs = append(evs, e)
		}
		// "t" takes the first half as rows, the second as map items.
		for i, kind := range layouts {
			db, err := engine.Open(ctx, store, engine.Options{Schema: configs[kind], Clock: clk})
			require.NoError(t, err)
			_, err = db.Write(ctx, "acme", "t", slices.Clone(evs[i*120:(i+1)*120]))
			require.NoError(t, err)
			if kind == family.LayoutRow {
				for _, table := range []string{"r", "m"} {
					_, err = db.Write(ctx, "acme", table, slices.Clone(evs))
					require.NoError(t, err)
				}
			}
			require.NoError(t, db.Close())
		}

		filters := []string{"", `level = "ERROR"`, `not exists(temp) or begins_with(msg, "tab")`}
		// Pages that end inside a millisecond's events; larger on
		// DynamoDB, where a page costs a request per series and shard.
		limit := 9
		if b.Name != "pebble" {
			limit = 30
		}
		for _, kind := range layouts {
			db, err := engine.Open(ctx, store, engine.Options{Schema: configs[kind], Clock: clk})
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			viewed, err := engine.Open(ctx, poisoned{store}, engine.Options{Schema: configs[kind], Clock: clk})
			require.NoError(t, err)
			t.Cleanup(func() { viewed.Close() })
			for _, table := range []string{"r", "m", "t"} {
				if table != "t" && kind != layouts[0] {
					// Only t's layout differs between the
					// configurations: r and m were read already.
					continue
				}
				for _, series := range []string{"", "s3"} {
					for _, desc := range []bool{false, true} {
						for _, fields := range [][]string{nil, {"level", "nested", "tt_ids"}} {
							for i, text := range filters {
								if fields != nil && i > 1 {
									// The projection with one filter is enough.
									continue
								}
								q := engine.Query{Table: table, Series: series, From: start, To: start.Add(5*time.Hour + 2*time.Millisecond), Desc: desc, Limit: limit, Fields: fields}
								if text != "" {
									q.Filter, err = filter.Parse(text)
									require.NoError(t, err)
								}
								name := fmt.Sprintf("config %s, table %s, series %q, desc %v, fields %v, filter %q", kind, table, series, desc, fields, text)
								requireSameJSON(t, db, viewed, q, name)
							}
						}
					}
				}
			}
		}
	})
}

// requireSameJSON walks a query's pages with db's Query and viewed's
// QueryJSON side by side and requires the same JSON and the same
// cursors, and at least one event.
func requireSameJSON(t *testing.T, db, viewed *engine.DB, q engine.Query, name string) {
	t.Helper()
	ctx := context.Background()
	events := 0
	for page := 0; ; page++ {
		p, err := db.Query(ctx, "acme", q)
		require.NoError(t, err, name)
		var want []byte
		for i, e := range p.Events {
			if i > 0 {
				want = append(want, ',')
			}
			want, err = e.AppendJSON(want)
			require.NoError(t, err, name)
		}
		got, err := viewed.QueryJSON(ctx, "acme", q, []byte("prefix"))
		require.NoError(t, err, name)
		require.True(t, strings.HasPrefix(string(got.Events), "prefix"), name)
		require.Equal(t, string(want), string(got.Events[len("prefix"):]), "%s, page %d", name, page)
		require.Equal(t, len(p.Events), got.Count, name)
		require.Equal(t, p.NextCursor, got.NextCursor, "%s, page %d", name, page)
		events += len(p.Events)
		if p.NextCursor == "" {
			break
		}
		q.Cursor = p.NextCursor
	}
	require.NotZero(t, events, name)
}
