package ingest

import (
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// LineProblems turns the engine's refusal of a line protocol table's
// events (engine.TableError's Err: an *event.BatchError, or
// engine.ErrBadTableName for its measurement) into the problems of their
// lines, numbered as t.Lines numbers them; any other error is returned
// as it is. The /write endpoints and `timetable import` name refused
// lines with it.
func LineProblems(t lineproto.Table, err error) ([]lineproto.Problem, error) {
	var be *event.BatchError
	if errors.As(err, &be) {
		return t.Problems(be), nil
	}
	if errors.Is(err, engine.ErrBadTableName) {
		problems := make([]lineproto.Problem, len(t.Lines))
		for i, line := range t.Lines {
			problems[i] = lineproto.Problem{Line: line, Reason: fmt.Sprintf("measurement %q is not a table name: use 1 to 255 of A-Z, a-z, 0-9, _, . and -, other than . and ..", t.Name)}
		}
		return problems, nil
	}
	return nil, err
}
