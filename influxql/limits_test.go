package influxql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/metricstest"
)

// terms returns n comparisons joined by op.
func terms(n int, op string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("v <> %d", i)
	}
	return strings.Join(parts, " "+op+" ")
}

// tagTerms returns n comparisons of the tag host joined by OR.
func tagTerms(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("host = 'h%d'", i)
	}
	return strings.Join(parts, " OR ")
}

// nested returns e in n parentheses.
func nested(n int, e string) string {
	return strings.Repeat("(", n) + e + strings.Repeat(")", n)
}

// The numbers and the size of a statement are checked before it is
// parsed: each bound passes at its value and is refused past it, naming
// itself.
func TestParseBounds(t *testing.T) {
	for _, c := range []struct {
		name, q string
		refused string // what the error names; "" when the query parses
	}{
		{"LIMIT at int64", "SELECT v FROM iq LIMIT 9223372036854775807", ""},
		{"LIMIT past int64", "SELECT v FROM iq LIMIT 9223372036854775808", "LIMIT 9223372036854775808"},
		{"OFFSET past int64", "SELECT v FROM iq OFFSET 99999999999999999999", "OFFSET 99999999999999999999"},
		{"SLIMIT past int64", "SELECT v FROM iq slimit 9223372036854775808", "SLIMIT 9223372036854775808"},
		{"SOFFSET past int64", "SHOW DATABASES; SELECT v FROM iq SOFFSET 9223372036854775808", "SOFFSET 9223372036854775808 in statement 2"},
		{"SHOW ... LIMIT past int64", "SHOW MEASUREMENTS LIMIT 9223372036854775808", "LIMIT 9223372036854775808"},
		{"a large number elsewhere", "SELECT v FROM iq WHERE v > 9223372036854775808", ""},
		{"depth at the bound", "SELECT v FROM iq WHERE " + nested(influxql.MaxDepth, "v > 1"), ""},
		{"depth past the bound", "SELECT v FROM iq WHERE " + nested(influxql.MaxDepth+1, "v > 1"), "influxql.MaxDepth"},
		{"depth with calls", "SELECT " + nested(influxql.MaxDepth, "mean(v)") + " FROM iq", "influxql.MaxDepth"},
		{"operators at the bound", "SELECT v FROM iq WHERE " + terms(influxql.MaxOperators/2, "AND") + " OR v", ""},
		{"operators past the bound", "SELECT v FROM iq WHERE " + terms(influxql.MaxOperators/2, "AND") + " OR -v", "influxql.MaxOperators"},
		{"60,000 terms", "SELECT v FROM iq WHERE " + terms(60_000, "AND"), "influxql.MaxOperators"},
		{"each statement has its own", "SELECT v FROM iq WHERE " + terms(400, "OR") + "; SELECT v FROM iq WHERE " + terms(400, "OR"), ""},
		// What the parser skips is not counted; what it reads is, however
		// it is written.
		{"parentheses in a string", "SELECT v FROM iq WHERE h = '" + strings.Repeat("(", 100) + "'", ""},
		{"in a regular expression", `SELECT v FROM iq WHERE h =~ /` + strings.Repeat(`\(`, 100) + `/`, ""},
		{"in a regular expression of FROM", `SELECT v FROM /` + strings.Repeat(`(`, 50) + strings.Repeat(`)`, 50) + `/`, ""},
		{"in a name", `SELECT "` + strings.Repeat("(", 100) + `" FROM iq`, ""},
		{"in comments", "SELECT v FROM iq -- " + strings.Repeat("(", 100) + "\nWHERE /* " + strings.Repeat("(", 100) + " */ v > 1", ""},
		{"after a division", "SELECT * / 2 FROM iq WHERE " + nested(influxql.MaxDepth+1, "v > 1"), "influxql.MaxDepth"},
		{"after a cast", "SELECT v::field / 2 FROM iq WHERE " + nested(influxql.MaxDepth+1, "v > 1"), "influxql.MaxDepth"},
		{"after a quote in a regular expression", "SELECT v FROM iq WHERE h =~ /'/ AND " + nested(influxql.MaxDepth+1, "v > 1"), "influxql.MaxDepth"},
		{"no statement", ";", "no statement"},
		{"only separators and comments", " ; -- x\n;", "no statement"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stmts, err := influxql.Parse(c.q, nil)
			if c.refused == "" {
				require.NoError(t, err)
				require.NotEmpty(t, stmts)
				return
			}
			require.ErrorIs(t, err, influxql.ErrQueryLimit)
			require.ErrorContains(t, err, c.refused)
		})
	}
}

// openWeather opens an engine on Pebble with a measurement iq of three
// series, host a, b and c, with v 1, 2 and 3 an hour before at.
func openWeather(t *testing.T, at time.Time, opts engine.Options) *engine.DB {
	t.Helper()
	ctx := context.Background()
	store, schema := backends.Pebble().Open(t)
	opts.Schema, opts.Clock = schema, clock.NewManual(at)
	db, err := engine.Open(ctx, store, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	var events []event.Event
	for i, h := range []string{"a", "b", "c"} {
		events = append(events, event.Event{Time: at.Add(-time.Hour), Series: "host=" + h,
			Fields: map[string]any{"host": h, "v": json.Number(strconv.Itoa(i + 1))}})
	}
	_, err = db.Write(ctx, "acme", "iq", events)
	require.NoError(t, err)
	return db
}

// Numbers at the edge of int64 answer as they read, and GROUP BY time()
// of no length is refused rather than read as no grouping.
func TestExecuteEdges(t *testing.T) {
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	db := openWeather(t, at, engine.Options{})
	run := func(q string) influxqlResult {
		t.Helper()
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err, q)
		res, _ := influxql.Execute(context.Background(), db, "acme", stmts, influxql.Options{Database: "acme", Now: at})
		rows := 0
		for _, s := range res[0].Series {
			rows += len(s.Values)
		}
		return influxqlResult{rows: rows, err: res[0].Error}
	}
	const most = "9223372036854775807"
	for q, rows := range map[string]int{
		"SELECT v FROM iq":                                        3,
		"SELECT v FROM iq OFFSET " + most:                         0,
		"SELECT v FROM iq LIMIT " + most:                          3,
		"SELECT v FROM iq LIMIT " + most + " OFFSET " + most:      0,
		"SELECT v FROM iq LIMIT 1 OFFSET 2":                       1,
		"SELECT v FROM iq GROUP BY host SLIMIT " + most:           3,
		"SELECT v FROM iq GROUP BY host SOFFSET " + most:          0,
		"SELECT v FROM iq GROUP BY host SLIMIT 1 SOFFSET " + most: 0,
		"SELECT v FROM iq WHERE host = 'a' OFFSET " + most:        0,
		"SELECT count(v) FROM iq WHERE time > now() - 2h GROUP BY time(1h) LIMIT " + most + " OFFSET " + most: 0,
		"SELECT count(v) FROM iq WHERE time > now() - 2h GROUP BY time(1h), host SOFFSET " + most:             0,
		"SHOW TAG VALUES WITH KEY = host LIMIT " + most + " OFFSET " + most:                                   0,
	} {
		got := run(q)
		require.Empty(t, got.err, q)
		require.Equal(t, rows, got.rows, q)
	}
	for _, q := range []string{
		"SELECT count(v) FROM iq WHERE time > now() - 2h GROUP BY time(0s)",
		"SELECT count(v) FROM iq WHERE time > now() - 2h GROUP BY time(0s, 1m), host",
		"SELECT v FROM iq WHERE time > now() - 2h GROUP BY time(-1s)",
	} {
		require.Contains(t, run(q).err, "the interval must be positive", q)
	}
}

type influxqlResult struct {
	rows int
	err  string
}

// cancelling is an engine whose context is cancelled once it has listed
// a measurement's series, and which counts the reads asked of it after.
type cancelling struct {
	*engine.DB
	cancel context.CancelFunc
	mu     sync.Mutex
	listed bool
	after  []string
}

func (c *cancelling) ListSeries(ctx context.Context, tenant, table, prefix, after string, limit int) (engine.SeriesPage, error) {
	page, err := c.DB.ListSeries(ctx, tenant, table, prefix, after, limit)
	c.mu.Lock()
	c.listed = true
	c.mu.Unlock()
	c.cancel()
	return page, err
}

func (c *cancelling) note(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listed {
		c.after = append(c.after, what)
	}
}

func (c *cancelling) LogicalTables(ctx context.Context, tenant string) ([]engine.LogicalTable, error) {
	c.note("tables")
	return c.DB.LogicalTables(ctx, tenant)
}

func (c *cancelling) Query(ctx context.Context, tenant string, q engine.Query) (engine.Page, error) {
	c.note("query")
	return c.DB.Query(ctx, tenant, q)
}

func (c *cancelling) Aggregate(ctx context.Context, tenant string, q engine.AggregateQuery) ([]engine.Bucket, error) {
	c.note("aggregate")
	return c.DB.Aggregate(ctx, tenant, q)
}

// A statement whose request ended stops before its next step: its
// error is the context's, and neither its reads nor the statements after
// it begin.
func TestExecuteStopsWhenCancelled(t *testing.T) {
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	db := openWeather(t, at, engine.Options{})
	for _, q := range []string{
		"SELECT v FROM iq WHERE host =~ /a|b/ OR " + tagTerms(400) + "; SHOW MEASUREMENTS",
		"SELECT count(v) FROM iq WHERE time > now() - 2h GROUP BY time(1h), host; SHOW MEASUREMENTS",
		"SELECT v FROM iq GROUP BY host; SHOW MEASUREMENTS",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		eng := &cancelling{DB: db, cancel: cancel}
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err)
		res, errs := influxql.Execute(ctx, eng, "acme", stmts, influxql.Options{Database: "acme", Now: at})
		require.ErrorIs(t, errs[0], context.Canceled, q)
		require.ErrorIs(t, errs[1], context.Canceled, q)
		require.Equal(t, context.Canceled.Error(), res[1].Error)
		require.Empty(t, eng.after, "%s: nothing read once cancelled", q)
	}
}

// An aggregate of several series takes a slot of the CPU pool for each
// while another tenant is active, as the engine's aggregates of every
// series do, and gives it back.
func TestAggregateTakesCPUSlots(t *testing.T) {
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	cpu := admission.NewCPU(1)
	reg := prometheus.NewRegistry()
	reg.MustRegister(cpu)
	db := openWeather(t, at, engine.Options{})
	cpu.Seen("globex")
	stmts, err := influxql.Parse("SELECT sum(v) FROM iq WHERE time > now() - 2h AND host =~ /a|b|c/", nil)
	require.NoError(t, err)
	res, _ := influxql.Execute(engine.WithCPU(context.Background(), cpu), db, "acme", stmts, influxql.Options{Database: "acme", Now: at, CPU: cpu})
	require.Empty(t, res[0].Error)
	require.Equal(t, json.Number("6"), res[0].Series[0].Values[0][1])
	require.Equal(t, 3.0, metricstest.Value(t, reg, "timetable_cpu_slots_taken_total", nil), "each series' aggregate took the pool's slot")
	require.Zero(t, metricstest.Value(t, reg, "timetable_cpu_slots_held", nil), "and gave it back")
}
