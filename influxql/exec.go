package influxql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
)

// Engine is what answering InfluxQL needs of timetable's engine
// (*engine.DB).
type Engine interface {
	LogicalTables(ctx context.Context, tenant string) ([]engine.LogicalTable, error)
	ListSeries(ctx context.Context, tenant, table, prefix, after string, limit int) (engine.SeriesPage, error)
	Query(ctx context.Context, tenant string, q engine.Query) (engine.Page, error)
	Aggregate(ctx context.Context, tenant string, q engine.AggregateQuery) ([]engine.Bucket, error)
}

// Defaults of Options.
const (
	DefaultMaxSeries  = 1_000_000
	DefaultMaxRows    = 10_000
	DefaultMaxBuckets = 100_000
)

// Options are a query's settings; the zero value of each is its default.
type Options struct {
	// Now is the time now() reads.
	Now time.Time
	// Database is the db parameter, which names the tenant's data
	// whatever it is; SHOW DATABASES lists the tenant's name.
	Database string
	// Epoch writes times as integers of this unit (ns, u, µ, ms, s, m,
	// h); empty writes RFC 3339.
	Epoch string
	// MaxSeries bounds the series of a measurement a statement lists
	// (DefaultMaxSeries), MaxRows the rows of one series of an answer
	// (DefaultMaxRows; a series cut there is marked partial; a raw
	// SELECT holds up to twice as many of the query budget, budget.go),
	// and
	// MaxBuckets the time buckets of an aggregate (DefaultMaxBuckets).
	MaxSeries, MaxRows, MaxBuckets int
	// Series, when set, keeps the series of measurements between
	// queries (SeriesCache); it needs an Engine that has SeriesVersion,
	// as *engine.DB does.
	Series *SeriesCache
	// Budget, when set, is the memory the query's answers may hold
	// (*engine.QueryHold, of the engine's query budget): Stream counts
	// the answers of its statements before it builds any (budget.go).
	Budget Budget
	// CPU, when set, is the pool of slots for heavy CPU work that the
	// engine's aggregates of every series take (engine.WithCPU): an
	// aggregate of a statement's series takes a slot for each series it
	// summarises (admission.CPU.AcquireFor), as those do for each turn
	// of series. The engine's aggregates of every series take theirs
	// from ctx.
	CPU *admission.CPU
}

// ErrUnsupported marks a statement, clause or function that timetable
// does not answer.
var ErrUnsupported = errors.New("not supported")

// EngineError is an error of the engine a statement met: the caller
// decides whether it is the statement's (a bad query) or the server's (a
// store unavailable), which InfluxDB's clients should see as a failed
// request rather than a statement's error.
type EngineError struct{ Err error }

func (e *EngineError) Error() string { return e.Err.Error() }
func (e *EngineError) Unwrap() error { return e.Err }

// executor answers the statements of one query.
type executor struct {
	eng    Engine
	tenant string
	opts   Options
	tables []engine.LogicalTable
	series map[string][]seriesTags
	fields map[string]fields // by table, read once per query
}

// Parse reads a query's statements: InfluxData's parser, once the text
// is within MaxDepth and MaxOperators and its LIMIT, OFFSET, SLIMIT and
// SOFFSET within int64. A query of no statement (";") is an error.
// Errors of the bounds wrap ErrQueryLimit.
func Parse(q string, params map[string]any) (iql.Statements, error) {
	if err := checkText(q); err != nil {
		return nil, err
	}
	p := iql.NewParser(strings.NewReader(q))
	if params != nil {
		p.SetParams(params)
	}
	query, err := p.ParseQuery()
	if err != nil {
		return nil, err
	}
	if len(query.Statements) == 0 {
		return nil, fmt.Errorf("the query holds no statement, only separators or comments: %w", ErrQueryLimit)
	}
	return query.Statements, nil
}

// Execute answers each statement in turn, each with its own result (its
// error in it, as InfluxDB does); errs holds each statement's error, nil
// for those that succeeded, for the caller to tell an EngineError of its
// own making from the statement's. It is Stream, its answer kept whole: a
// query that Stream refuses has that error in every result. Once ctx
// ends, the statement at work stops between its steps and those left are
// not begun: their errors are ctx's (context.Canceled,
// context.DeadlineExceeded).
func Execute(ctx context.Context, eng Engine, tenant string, stmts iql.Statements, o Options) (results []api.InfluxQLResult, errs []error) {
	c := &collected{results: make([]api.InfluxQLResult, len(stmts)), errs: make([]error, len(stmts))}
	if err := Stream(ctx, eng, tenant, stmts, o, c); err != nil {
		for i := range stmts {
			c.results[i] = api.InfluxQLResult{StatementID: i, Error: err.Error()}
			c.errs[i] = err
		}
	}
	return c.results, c.errs
}

// collected is an Answer kept whole, for Execute.
type collected struct {
	results []api.InfluxQLResult
	errs    []error
}

func (c *collected) Series(i int, s api.InfluxQLSeries) error {
	c.results[i].Series = append(c.results[i].Series, s)
	return nil
}

func (c *collected) End(i int, err error) error {
	c.results[i].StatementID = i
	if err != nil {
		c.results[i] = api.InfluxQLResult{StatementID: i, Error: err.Error()}
		c.errs[i] = err
	}
	return nil
}

// newExecutor returns the executor of one query, o's defaults set.
func newExecutor(eng Engine, tenant string, o Options) *executor {
	if o.MaxSeries <= 0 {
		o.MaxSeries = DefaultMaxSeries
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = DefaultMaxBuckets
	}
	return &executor{eng: eng, tenant: tenant, opts: o, series: map[string][]seriesTags{}, fields: map[string]fields{}}
}

// run answers one statement, its series given to emit one by one as
// they are built.
func (x *executor) run(ctx context.Context, st iql.Statement, emit func(api.InfluxQLSeries) error) error {
	if err := x.checkDatabase(st); err != nil {
		if errors.Is(err, errNoSuchDatabase) {
			return nil
		}
		return err
	}
	if sel, ok := st.(*iql.SelectStatement); ok {
		return x.selectStatement(ctx, sel, emit)
	}
	series, err := x.statement(ctx, st)
	if err != nil {
		return err
	}
	for _, s := range series {
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}

// statement answers one statement other than a SELECT.
func (x *executor) statement(ctx context.Context, st iql.Statement) ([]api.InfluxQLSeries, error) {
	switch st := st.(type) {
	case *iql.ShowDatabasesStatement:
		return []api.InfluxQLSeries{{Name: "databases", Columns: []string{"name"}, Values: [][]any{{x.tenant}}}}, nil
	case *iql.CreateDatabaseStatement:
		// Every name is the tenant's data, which exists.
		if st.RetentionPolicyCreate {
			return nil, fmt.Errorf("CREATE DATABASE ... WITH: retention policies are %w: timetable's retention is the family's (docs/lifecycle.md)", ErrUnsupported)
		}
		return nil, nil
	case *iql.ShowRetentionPoliciesStatement:
		return []api.InfluxQLSeries{{Columns: []string{"name", "duration", "shardGroupDuration", "replicaN", "default"},
			Values: [][]any{{"autogen", "0s", "168h0m0s", 1, true}}}}, nil
	case *iql.ShowMeasurementsStatement:
		return x.showMeasurements(ctx, st)
	case *iql.ShowTagKeysStatement:
		return x.showTagKeys(ctx, st)
	case *iql.ShowTagValuesStatement:
		return x.showTagValues(ctx, st)
	case *iql.ShowFieldKeysStatement:
		return x.showFieldKeys(ctx, st)
	case *iql.ShowSeriesStatement:
		return x.showSeries(ctx, st)
	case *iql.ShowMeasurementCardinalityStatement, *iql.ShowSeriesCardinalityStatement, *iql.ShowTagKeyCardinalityStatement,
		*iql.ShowTagValuesCardinalityStatement, *iql.ShowFieldKeyCardinalityStatement:
		return x.cardinality(ctx, st)
	}
	word := strings.Fields(st.String())
	if len(word) > 2 {
		word = word[:2]
	}
	return nil, fmt.Errorf("%s is %w by timetable: it answers SELECT and SHOW DATABASES, MEASUREMENTS, TAG KEYS, TAG VALUES, FIELD KEYS, SERIES, RETENTION POLICIES and their CARDINALITY", strings.Join(word, " "), ErrUnsupported)
}

// logicalTables returns the tenant's logical tables, read once per query.
func (x *executor) logicalTables(ctx context.Context) ([]engine.LogicalTable, error) {
	if x.tables == nil {
		t, err := x.eng.LogicalTables(ctx, x.tenant)
		if err != nil {
			return nil, &EngineError{Err: err}
		}
		if t == nil {
			t = []engine.LogicalTable{} // read, and none
		}
		x.tables = t
	}
	return x.tables, nil
}

// measurements returns the logical tables sources name: by name or by a
// regular expression; no source names every table.
func (x *executor) measurements(ctx context.Context, sources iql.Sources) ([]engine.LogicalTable, error) {
	all, err := x.logicalTables(ctx)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return all, nil
	}
	var out []engine.LogicalTable
	for _, src := range sources {
		m, ok := src.(*iql.Measurement)
		if !ok {
			return nil, fmt.Errorf("a subquery in FROM is %w", ErrUnsupported)
		}
		for _, t := range all {
			if (m.Regex != nil && m.Regex.Val.MatchString(t.Name)) || (m.Regex == nil && t.Name == m.Name) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
