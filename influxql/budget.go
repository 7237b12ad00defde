package influxql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/api"
)

// Budget is the memory a query's answers may hold: the engine's query
// budget, which reads of every series take their partitions from too
// (*engine.QueryHold), so that one budget bounds every read path.
type Budget interface {
	// Fits returns nil when n bytes may ever be held, else the error
	// that refuses them, naming the limit.
	Fits(n int64) error
	// Resize makes what the query holds n bytes, waiting for room as
	// reads of every series do; its error refuses the statement.
	Resize(ctx context.Context, n int64) error
}

// Answer receives a query's answer as it is built: each statement's
// series in turn, then its end. An error it returns ends the query.
type Answer interface {
	// Series is one series of statement i's result.
	Series(i int, s api.InfluxQLSeries) error
	// End ends statement i's result; err is its error, nil when it
	// succeeded.
	End(i int, err error) error
}

// What an aggregate's answer holds, as it is built: a row of it takes
// rowBytes and valueBytes a column, time included (the bucket's state,
// the row's values and its time written out).
const (
	rowBytes   = 64
	valueBytes = 48
)

// What a raw SELECT holds of each row as it is built: the event read
// (its time, series, id and map of fields) and the answer's row (its
// time written out and a value a column), rawRowBytes and rawValueBytes
// a column, time not included. TestRawRowsHoldNoMoreThanCounted
// measures them.
const (
	rawRowBytes   = 640
	rawValueBytes = 120
)

// answerError is an error of the Answer, which ends the query.
type answerError struct{ err error }

func (e *answerError) Error() string { return e.err.Error() }
func (e *answerError) Unwrap() error { return e.err }

// Stream answers each statement in turn, giving its series to a as they
// are built, each statement's error in its End, as InfluxDB answers
// them. With a Budget, the answers of the query's statements are counted
// before any statement is answered (size), every statement together: an
// aggregate as series × buckets (filled ones too) × columns, at rowBytes
// and valueBytes each; a raw SELECT as the rows of one group it holds at
// once, OFFSET's included, at rawRowBytes and rawValueBytes. A query
// whose statements together are more than the budget may ever hold is
// refused whole, with Budget.Fits's error, before anything is answered;
// each statement holds its own count of the budget while it is built
// (Budget.Resize, its error the statement's). Stream returns the refusal of the query,
// or the error of a, which ends it.
func Stream(ctx context.Context, eng Engine, tenant string, stmts iql.Statements, o Options, a Answer) error {
	x := newExecutor(eng, tenant, o)
	sizes := make([]int64, len(stmts))
	if o.Budget != nil {
		// The statements of a request count together, raw and
		// aggregate: the request is answered or refused whole.
		var total int64
		for i, st := range stmts {
			n, what := x.size(ctx, st)
			sizes[i] = n
			total = addSat64(total, n)
			if err := o.Budget.Fits(total); err != nil {
				return fmt.Errorf("statement %d answers %s: with the statements before it about %d MiB to build: %w", i, what, mebibytes(total), err)
			}
		}
		defer o.Budget.Resize(context.WithoutCancel(ctx), 0)
	}
	for i, st := range stmts {
		// A request ended (its client left, the server shut down)
		// answers nobody: the statements left fail at once.
		err := ctx.Err()
		if err == nil && o.Budget != nil {
			err = o.Budget.Resize(ctx, sizes[i])
		}
		if err == nil {
			err = x.run(ctx, st, func(s api.InfluxQLSeries) error {
				if err := a.Series(i, s); err != nil {
					return &answerError{err}
				}
				return nil
			})
		}
		if ae := (*answerError)(nil); errors.As(err, &ae) {
			return ae.err
		}
		if err := a.End(i, err); err != nil {
			return err
		}
	}
	return nil
}

// size returns what a statement's answer holds as it is built and says
// what it counted: for a
// SELECT of aggregates, its series × rows (every bucket of GROUP BY
// time() that fill answers, within LIMIT and OFFSET) × its columns; for
// a raw SELECT, the rows one group holds at once (rawSize). Other
// statements, and one that fails, count nothing (the failure comes again
// when it is answered): the SHOW statements' answers are bounded by the
// series index (Options.MaxSeries).
func (x *executor) size(ctx context.Context, stmt iql.Statement) (int64, string) {
	st, ok := stmt.(*iql.SelectStatement)
	if !ok {
		return 0, "nothing counted"
	}
	sel, err := x.selection(ctx, st)
	if err != nil {
		return 0, "nothing counted"
	}
	if st.IsRawQuery {
		return x.rawSize(ctx, st, sel)
	}
	cols := int64(len(columnNames(st.Fields)))
	var groups, rows, n int64
	for _, t := range sel.tables {
		p, err := x.planSelect(ctx, st, sel, t, true)
		if err != nil {
			return 0, "nothing counted"
		}
		r := int64(x.buckets(p))
		if cs, _, err := aggColumns(st, p.interval); err == nil && hasTransform(cs) {
			// Each column's rows are cut by OFFSET and LIMIT on their
			// own (transform.go): the rows are some of the buckets, up to
			// LIMIT of each column.
			if st.Limit > 0 {
				r = min(r, int64(st.Limit)*int64(len(cs)))
			}
		} else {
			r = max(r-int64(st.Offset), 0)
			if st.Limit > 0 {
				r = min(r, int64(st.Limit))
			}
		}
		groups += int64(p.counted)
		rows = max(rows, r)
		n = addSat64(n, mulSat64(int64(p.counted)*r, rowBytes+(cols+1)*valueBytes))
	}
	return n, fmt.Sprintf("%d series × %d rows of %d columns", groups, rows, cols+1)
}

// rawSize is size of a raw SELECT: it reads one group at a time, and a
// group holds at most rawRows events and their rows at once, for need
// rows, OFFSET + LIMIT or one more than Options.MaxRows (raw; OFFSET's
// not held of a group of one series), each
// event and row rawRowBytes and rawValueBytes a column: the fields
// selected, or with * every field and tag the measurement has
// (fieldTypes). A statement that reads no group counts nothing.
func (x *executor) rawSize(ctx context.Context, st *iql.SelectStatement, sel *selection) (int64, string) {
	need := rawNeed(st, x.opts.MaxRows)
	var cols int
	read, how := false, readOne
	for _, t := range sel.tables {
		p, err := x.planSelect(ctx, st, sel, t, true)
		if err != nil {
			return 0, "nothing counted"
		}
		if p.counted == 0 {
			continue
		}
		read = true
		how = max(how, p.countedRead)
		c := 0
		for _, f := range st.Fields {
			switch e := f.Expr.(type) {
			case *iql.VarRef:
				if e.Val != "time" {
					c++
				}
			case *iql.Wildcard:
				types, keys, err := x.fieldTypes(ctx, t)
				if err != nil {
					return 0, "nothing counted"
				}
				c += len(types) + len(keys)
			}
		}
		cols = max(cols, c)
	}
	if !read {
		return 0, "nothing counted"
	}
	if how == readOne {
		need -= st.Offset // skipped as they are read
	}
	rows := rawRows(need, how)
	n := mulSat64(int64(rows), int64(rawRowBytes+cols*rawValueBytes))
	return n, fmt.Sprintf("up to %d rows of %d columns of a group at once, for OFFSET %d and %d rows", rows, cols+1, st.Offset, need-st.Offset)
}

// mebibytes is n bytes in MiB, rounded up.
func mebibytes(n int64) int64 {
	if n%(1<<20) != 0 {
		return n>>20 + 1
	}
	return n >> 20
}

// addSat64 and mulSat64 add and multiply counts of bytes, which are not
// negative, at most math.MaxInt64: a count past it is past every budget.
func addSat64(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat64(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// rawRows is the most events and rows a raw SELECT holds at once for
// need rows of a group read as how reads it (read): of one series, need,
// past OFFSET's, which are skipped as they are read;
// of every series, need and a page past it for those of the same time;
// of several series merged, the answer so far and a series' events,
// twice need.
func rawRows(need int, how groupRead) int {
	switch how {
	case readWhole:
		return addSat(need, pageSize)
	case readMerged:
		return addSat(need, need)
	}
	return need
}

// buckets returns the rows of each series of an aggregate's answer
// before LIMIT and OFFSET: its buckets, or one without GROUP BY time();
// 0 for an aggregate that the executor refuses for its buckets.
func (x *executor) buckets(p *plan) int {
	if p.interval == 0 {
		return 1
	}
	if p.interval < time.Second || (24*time.Hour)%p.interval != 0 || p.to.Before(p.from) {
		return 0
	}
	if n := int(p.to.Sub(p.from)/p.interval) + 1; n > x.opts.MaxBuckets {
		return 0
	}
	w := windows{interval: p.interval, offset: p.offset, loc: p.loc}
	n := len(w.starts(p.from, p.to, x.opts.MaxBuckets))
	if n > x.opts.MaxBuckets {
		return 0
	}
	return n
}
