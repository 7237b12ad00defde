package influxql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
)

// answers records what Stream answers.
type answers struct {
	series []api.InfluxQLSeries
	errs   []error
}

func (a *answers) Series(i int, s api.InfluxQLSeries) error {
	a.series = append(a.series, s)
	return nil
}

func (a *answers) End(i int, err error) error {
	a.errs = append(a.errs, err)
	return nil
}

// With a Budget, the answers of a query's aggregates are counted before
// any is built: series × buckets (filled ones too), all statements
// together. A query over what the budget may ever hold is refused before
// anything is answered, naming max_query_partitions; a statement that
// fits but finds the tenant's share held is refused once it has waited,
// in its result; what the query held is given back when it ends.
// budgetNow is the clock's time of twentyHosts' engine.
var budgetNow = time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)

// twentyHosts is an engine whose query budget holds partitions, and
// whose measurement m holds one event of each of 20 hosts an hour before
// budgetNow.
func twentyHosts(t *testing.T, partitions int) *engine.DB {
	t.Helper()
	ctx := context.Background()
	at := budgetNow
	store, schema := backends.Pebble().Open(t)
	db, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clock.NewManual(at), MaxQueryPartitions: partitions, QueryBudgetWait: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	var events []event.Event
	for i := range 20 {
		host := fmt.Sprintf("h%02d", i)
		events = append(events, event.Event{Time: at.Add(-time.Hour), Series: "host=" + host,
			Fields: map[string]any{"host": host, "v": json.Number(strconv.Itoa(i))}})
	}
	_, err = db.Write(ctx, "acme", "m", events)
	require.NoError(t, err)
	return db
}

func TestAnswersAreCountedBeforeTheyAreBuilt(t *testing.T) {
	ctx := context.Background()
	at := budgetNow
	db := twentyHosts(t, 100)
	// acme may hold 10 partitions: 20 KiB.
	capped := engine.WithTenantQueryPartitions(ctx, 10)
	stream := func(q string) (*answers, error) {
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err)
		hold := db.QueryHold(capped, "acme")
		defer hold.Release()
		a := &answers{}
		err = influxql.Stream(capped, db, "acme", stmts, influxql.Options{Database: "acme", Now: at, Budget: hold}, a)
		return a, err
	}

	// 20 series × 1,441 minutes, filled: refused, nothing answered.
	a, err := stream("SHOW DATABASES; SELECT mean(v) FROM m WHERE time > now() - 1d GROUP BY time(1m), * fill(null)")
	var le *admission.LimitError
	require.ErrorAs(t, err, &le)
	require.True(t, le.Never)
	require.ErrorContains(t, err, "statement 1 answers 20 series × 1441 rows of 2 columns")
	require.ErrorContains(t, err, "max_query_partitions = 10")
	require.Empty(t, a.series)
	require.Empty(t, a.errs)

	// One series' 25 hours fit (4,000 bytes: 2 partitions); four times
	// over in one query they do not, counted together.
	one := "SELECT mean(v) FROM m WHERE host = 'h07' AND time > now() - 1d GROUP BY time(1h) fill(null);"
	a, err = stream(one + one)
	require.NoError(t, err)
	require.Equal(t, []error{nil, nil}, a.errs)
	require.Len(t, a.series, 2)
	require.Len(t, a.series[0].Values, 25)
	require.Equal(t, json.Number("7"), a.series[0].Values[23][1])
	_, err = stream(one + one + one + one + one + one)
	require.ErrorContains(t, err, "statement 5 answers 1 series × 25 rows of 2 columns")
	require.ErrorAs(t, err, &le)

	// Another of acme's reads holds 9 of its 10 partitions: the
	// statement waits, then is refused, to be retried.
	other := db.QueryHold(capped, "acme")
	require.NoError(t, other.Resize(ctx, 9*engine.QueryPartitionBytes))
	a, err = stream("SHOW DATABASES;" + one)
	require.NoError(t, err)
	require.Len(t, a.errs, 2)
	require.NoError(t, a.errs[0])
	require.ErrorAs(t, a.errs[1], &le)
	require.False(t, le.Never)
	require.Equal(t, "max_query_partitions", le.Limit)
	other.Release()
	held, _ := db.QueryPartitions("acme")
	require.Zero(t, held, "every query gave back what it held")
}

// A raw SELECT is counted with the aggregates, before any statement is
// answered: the rows of one group it may hold at once (OFFSET's, then
// LIMIT's or one more than Options.MaxRows, and those of the series it
// merges). One over what the budget may ever hold is refused naming
// max_query_partitions, an OFFSET far past the events too, before
// anything is read; statements that each fit but not together, raw or
// aggregate, are refused before any is answered; raw SELECTs that fit
// together are answered, each holding its own count while it is read.
func TestRawAnswersAreCountedBeforeTheyAreRead(t *testing.T) {
	ctx := context.Background()
	at := budgetNow
	db := twentyHosts(t, 8000)
	// acme may hold 4,000 partitions: 8,000 KiB, its reads of every
	// series theirs too.
	capped := engine.WithTenantQueryPartitions(ctx, 4000)
	stream := func(q string, maxRows int) (*answers, error) {
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err)
		hold := db.QueryHold(capped, "acme")
		defer hold.Release()
		a := &answers{}
		err = influxql.Stream(capped, db, "acme", stmts, influxql.Options{Database: "acme", Now: at, Budget: hold, MaxRows: maxRows}, a)
		return a, err
	}
	var le *admission.LimitError

	// The default MaxRows, of a read of every series: 10,001 rows and a
	// page, about 8 MiB.
	a, err := stream("SHOW DATABASES; SELECT v FROM m", 0)
	require.ErrorAs(t, err, &le)
	require.True(t, le.Never)
	require.ErrorContains(t, err, "statement 1 answers up to 11001 rows of 2 columns of a group at once, for OFFSET 0 and 10001 rows")
	require.ErrorContains(t, err, "max_query_partitions = 4000")
	require.Empty(t, a.series)
	require.Empty(t, a.errs)

	// With MaxRows 5,000, about 4.3 MiB: answered alone; twice in one
	// query, counted together, refused before the first is read. With
	// LIMIT 5, about 0.7 MiB: three times in one query, answered.
	raw := "SELECT v FROM m;"
	a, err = stream(raw, 5000)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, a.errs)
	require.Len(t, a.series, 1)
	require.Len(t, a.series[0].Values, 20)
	require.Equal(t, json.Number("19"), a.series[0].Values[19][1])
	a, err = stream(raw+raw, 5000)
	require.ErrorContains(t, err, "statement 1 answers up to 6001 rows of 2 columns of a group at once, for OFFSET 0 and 5001 rows: with the statements before it about 9 MiB to build")
	require.ErrorAs(t, err, &le)
	require.True(t, le.Never)
	require.Empty(t, a.series)
	require.Empty(t, a.errs)
	limited := "SELECT v FROM m LIMIT 5;"
	a, err = stream(limited+limited+limited, 5000)
	require.NoError(t, err)
	require.Equal(t, []error{nil, nil, nil}, a.errs)
	require.Len(t, a.series, 3)
	require.Len(t, a.series[2].Values, 5)
	held, _ := db.QueryPartitions("acme")
	require.Zero(t, held, "every query gave back what it held")

	// An aggregate of 20 series × 1,441 buckets, about 4.4 MiB: alone,
	// answered; twice, or with a raw SELECT, counted together, refused.
	agg := "SELECT mean(v) FROM m WHERE time > now() - 1d GROUP BY time(1m), * fill(null);"
	_, err = stream(agg+agg, 5000)
	require.ErrorContains(t, err, "statement 1 answers 20 series × 1441 rows of 2 columns")
	a, err = stream(agg, 5000)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, a.errs)
	require.Len(t, a.series, 20)
	_, err = stream(agg+raw, 5000)
	require.ErrorContains(t, err, "statement 1 answers up to 6001 rows of 2 columns of a group at once, for OFFSET 0 and 5001 rows")
	require.ErrorAs(t, err, &le)
	require.Equal(t, "max_query_partitions", le.Limit)

	// OFFSET's rows are counted: far past the events, refused before
	// anything is read; within the budget, the rows past it, events of
	// one time in the order of their series.
	a, err = stream("SELECT v FROM m LIMIT 10 OFFSET 5000000", 5000)
	require.ErrorContains(t, err, "statement 0 answers up to 5001010 rows of 2 columns of a group at once, for OFFSET 5000000 and 10 rows")
	require.ErrorAs(t, err, &le)
	require.True(t, le.Never)
	require.Empty(t, a.series)
	// An OFFSET whose count of bytes is past int64 is past the budget,
	// not wrapped round to a count that fits.
	for _, offset := range []string{"1152921504606846976", "9223372036854775807"} {
		a, err = stream("SELECT v FROM m LIMIT 10 OFFSET "+offset+"; SELECT v FROM m LIMIT 1", 5000)
		require.ErrorContains(t, err, "statement 0 answers up to", "%v %v", a.errs, a.series)
		require.ErrorAs(t, err, &le)
		require.True(t, le.Never)
		require.Empty(t, a.series)
	}
	a, err = stream("SELECT v FROM m LIMIT 3 OFFSET 16", 5000)
	require.NoError(t, err)
	require.Len(t, a.series, 1)
	require.Equal(t, [][]any{
		{"2017-06-15T08:00:00Z", json.Number("16")},
		{"2017-06-15T08:00:00Z", json.Number("17")},
		{"2017-06-15T08:00:00Z", json.Number("18")},
	}, a.series[0].Values)
	// Series merged hold the answer so far and a series' events; a
	// series alone, its rows past OFFSET, which it skips as it reads
	// them.
	_, err = stream("SELECT v FROM m WHERE host =~ /^h1/ LIMIT 5 OFFSET 2000000", 5000)
	require.ErrorContains(t, err, "statement 0 answers up to 4000010 rows of 2 columns")
	a, err = stream("SELECT v FROM m GROUP BY * LIMIT 5 OFFSET 2000000", 5000)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, a.errs)
	require.Empty(t, a.series)
	var run []event.Event
	for i := range 10 {
		run = append(run, event.Event{Time: at.Add(time.Duration(i-10) * time.Minute), Series: "host=hx",
			Fields: map[string]any{"host": "hx", "v": json.Number(strconv.Itoa(i))}})
	}
	_, err = db.Write(ctx, "acme", "n", run)
	require.NoError(t, err)
	for q, want := range map[string][]string{
		"SELECT v FROM n WHERE host = 'hx' LIMIT 3 OFFSET 4":                    {"4", "5", "6"},
		"SELECT v FROM n GROUP BY host OFFSET 8":                                {"8", "9"},
		"SELECT v FROM n WHERE host = 'hx' ORDER BY time DESC LIMIT 2 OFFSET 7": {"2", "1"},
		"SELECT v FROM n WHERE host = 'hx' AND v > 2 LIMIT 2 OFFSET 1":          {"4", "5"},
		"SELECT v FROM n WHERE host = 'hx' OFFSET 10":                           nil,
	} {
		a, err = stream(q, 5000)
		require.NoError(t, err, q)
		var got []string
		for _, s := range a.series {
			for _, row := range s.Values {
				got = append(got, string(row[1].(json.Number)))
			}
		}
		require.Equal(t, want, got, q)
	}
	a, err = stream("SELECT v FROM m WHERE host =~ /^h1/ LIMIT 3 OFFSET 5", 5000)
	require.NoError(t, err)
	require.Equal(t, [][]any{
		{"2017-06-15T08:00:00Z", json.Number("15")},
		{"2017-06-15T08:00:00Z", json.Number("16")},
		{"2017-06-15T08:00:00Z", json.Number("17")},
	}, a.series[0].Values)
	held, _ = db.QueryPartitions("acme")
	require.Zero(t, held, "every query gave back what it held")
}
