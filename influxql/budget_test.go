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
func TestAnswersAreCountedBeforeTheyAreBuilt(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	store, schema := backends.Pebble().Open(t)
	db, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clock.NewManual(at), MaxQueryPartitions: 100, QueryBudgetWait: 10 * time.Millisecond})
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
	// acme may hold 10 partitions: 20 KiB.
	capped := engine.WithTenantQueryPartitions(ctx, 10)
	stream := func(q string) (*answers, error) {
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err)
		hold := db.QueryHold(capped, "acme")
		defer hold.Release()
		a := &answers{}
		err = influxql.Stream(capped, db, "acme", stmts, influxql.Options{Now: at, Budget: hold}, a)
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
