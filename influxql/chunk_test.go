package influxql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
)

// InfluxQL over a family of the chunk layout answers as over one of
// rows: raw selects in both orders with limits and offsets, filters on
// tags and fields, aggregates by time and tag, and the schema
// statements.
func TestChunkLayoutAnswersAsRows(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	open := func(layout family.Layout) *engine.DB {
		store, schema := backends.Pebble().Open(t)
		schema.Families[0].Layout = layout
		db, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clock.NewManual(at.Add(time.Hour))})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, db.Close()) })
		return db
	}
	rows, chunks := open(family.LayoutRow), open(family.LayoutChunk)
	// Telegraf's shape: ten readings of each host a request, ten
	// seconds apart, over two hours.
	for req := range 72 {
		var evs []event.Event
		for host := range 20 {
			for k := range 10 {
				i := req*10 + k
				h := fmt.Sprintf("h%02d", host)
				evs = append(evs, event.Event{Time: at.Add(-2*time.Hour + time.Duration(i)*10*time.Second), Series: "host=" + h + ",region=r" + strconv.Itoa(host%3),
					Fields: map[string]any{"host": h, "region": "r" + strconv.Itoa(host%3), "usage": json.Number(fmt.Sprintf("%d.%d", 10+(i*7+host)%80, i%10)), "up": i%5 != 0, "state": []string{"ok", "warn"}[(i+host)%7/6]}})
			}
		}
		for _, db := range []*engine.DB{rows, chunks} {
			_, err := db.Write(ctx, "acme", "cpu", evs)
			require.NoError(t, err)
		}
	}
	for _, q := range []string{
		`SELECT * FROM cpu WHERE host = 'h03' LIMIT 7`,
		`SELECT usage, state FROM cpu WHERE time >= now() - 95m ORDER BY time DESC LIMIT 10`,
		`SELECT usage FROM cpu WHERE region = 'r1' AND usage > 50 LIMIT 20 OFFSET 5`,
		`SELECT mean(usage), max(usage), count(usage) FROM cpu WHERE time >= now() - 3h GROUP BY time(10m), host`,
		`SELECT last(usage), first(state) FROM cpu GROUP BY host`,
		`SELECT sum(usage) FROM cpu WHERE up = true AND time >= now() - 3h GROUP BY time(1h)`,
		`SHOW TAG VALUES FROM cpu WITH KEY = "region"`,
		`SHOW FIELD KEYS FROM cpu`,
	} {
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err)
		want, _ := influxql.Execute(ctx, rows, "acme", stmts, influxql.Options{Database: "acme", Now: at.Add(time.Hour)})
		got, _ := influxql.Execute(ctx, chunks, "acme", stmts, influxql.Options{Database: "acme", Now: at.Add(time.Hour)})
		require.Empty(t, want[0].Error, q)
		require.NotEmpty(t, want[0].Series, q)
		require.Equal(t, want, got, q)
	}
}
