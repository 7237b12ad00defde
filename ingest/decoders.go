package ingest

import (
	"slices"

	"github.com/timetabledb/timetable/admission"
	"time"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// JSON is the Decoder of a body of events of one table: a JSON array
// (event.DecodeJSON) or one event a line (NDJSON, event.DecodeNDJSON).
type JSON struct {
	Table  string
	NDJSON bool
	Limits event.Limits
	// Now is the time the events' future skew is measured from.
	Now time.Time
}

func (d JSON) Decode(body []byte) ([]engine.TableEvents, error) {
	decode := event.DecodeJSON
	if d.NDJSON {
		decode = event.DecodeNDJSON
	}
	events, err := decode(body, d.Limits, d.Now)
	if err != nil {
		return nil, err
	}
	return []engine.TableEvents{{Table: d.Table, Events: events}}, nil
}

func (d JSON) Format() admission.Format {
	if d.NDJSON {
		return admission.NDJSON
	}
	return admission.JSON
}

// LineProtocol is the Decoder and TableChecker of an InfluxDB line
// protocol body (lineproto.Decode), whose measurements name its tables.
// It keeps the tables it decoded, whose lines name the problems of a
// refusal.
type LineProtocol struct {
	Options lineproto.Options
	// Tables are the tables Decode decoded.
	Tables []lineproto.Table
}

func (d *LineProtocol) Decode(body []byte) ([]engine.TableEvents, error) {
	tables, err := lineproto.Decode(body, d.Options)
	if err != nil {
		return nil, err
	}
	d.Tables = tables
	parts := make([]engine.TableEvents, len(tables))
	for i, t := range tables {
		parts[i] = engine.TableEvents{Table: t.Name, Events: t.Events}
	}
	return parts, nil
}

func (d *LineProtocol) Format() admission.Format { return admission.LineProtocol }

// Refused returns the engine's refusals of the tables (errs, by table,
// nil for a table it takes) as a *lineproto.Error naming the problems of
// their lines in line order, nil when it takes every table, or the first
// refusal that is no problem of lines (a table budget's, a store's) as
// it is.
func (d *LineProtocol) Refused(errs []error) error {
	var problems []lineproto.Problem
	for i, err := range errs {
		p, err := LineProblems(d.Tables[i], err)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
	}
	if problems == nil {
		return nil
	}
	slices.SortFunc(problems, func(a, b lineproto.Problem) int { return a.Line - b.Line })
	return &lineproto.Error{Problems: problems}
}
