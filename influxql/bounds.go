package influxql

import (
	"time"

	iql "github.com/influxdata/influxql"

	"github.com/timetabledb/timetable/engine"
)

// # How a statement's range is bounded
//
// WHERE time bounds a statement's range, both ends inclusive (time < t
// is time <= t - 1ns, as InfluxDB's parser reads it). An end left open
// is the table's: its recorded range of event times, which the engine
// keeps to within engine.RangeGrain of the events (a write that extends
// it by less is not recorded), widened by that grain so that no event
// acknowledged is missed; all time from 1970 to two days past now for a
// table without one. An aggregate's open end is now instead, as
// InfluxDB's aggregates end now. A range that holds no time (a lower
// bound after the upper, as time > now() past the newest point) answers
// nothing, as InfluxDB does, rather than an error.

// statementRange returns the range a statement reads of a table, and
// whether it gave a lower bound.
func (x *executor) statementRange(st *iql.SelectStatement, t engine.LogicalTable, tr iql.TimeRange) (from, to time.Time, bounded bool) {
	from, to = x.tableRange(t)
	if !tr.Min.IsZero() {
		bounded = true
		from = tr.Min
	}
	if !tr.Max.IsZero() {
		to = tr.Max
	} else if !st.IsRawQuery {
		to = x.opts.Now
	}
	return from, to, bounded
}

// tableRange is the range of a table's event times, widened by the
// grain the engine records them to, or all time when the table did not
// record it.
func (x *executor) tableRange(t engine.LogicalTable) (time.Time, time.Time) {
	from, to := t.First, t.Last
	if from.IsZero() || to.IsZero() {
		return time.Unix(0, 0).UTC(), x.opts.Now.Add(48 * time.Hour)
	}
	return from.Add(-engine.RangeGrain), to.Add(engine.RangeGrain)
}

// empty reports whether a plan's range holds no time.
func (p *plan) empty() bool { return p.from.After(p.to) }
