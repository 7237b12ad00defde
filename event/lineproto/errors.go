package lineproto

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/timetabledb/timetable/event"
)

// Problem is what is wrong with one line of a body.
type Problem struct {
	// Line is the line's number, 1-based.
	Line int `json:"line"`
	// Text is the start of the line, to find it by; empty for problems
	// found past decoding (Table.Problems).
	Text string `json:"text,omitempty"`
	// Reason says what is wrong.
	Reason string `json:"reason"`
}

// Error lists every bad line of a body; when Decode returns it, no line
// of the body may be written. It matches event.ErrInvalidEvent with
// errors.Is.
type Error struct {
	// Problems holds one problem per bad line, in line order.
	Problems []Problem
}

// Error names the first few bad lines, as InfluxDB does ("unable to
// parse"), and counts the others.
func (e *Error) Error() string {
	noun := "lines"
	if len(e.Problems) == 1 {
		noun = "line"
	}
	return fmt.Sprintf("%s: %d bad %s", event.ErrInvalidEvent, len(e.Problems), noun) +
		event.ListProblems(len(e.Problems), func(i int) string {
			p := e.Problems[i]
			if p.Text == "" {
				return fmt.Sprintf("line %d: %s", p.Line, p.Reason)
			}
			return fmt.Sprintf("line %d: unable to parse '%s': %s", p.Line, p.Text, p.Reason)
		})
}

// Is reports whether target is event.ErrInvalidEvent.
func (e *Error) Is(target error) bool { return target == event.ErrInvalidEvent }

// syntaxReason says where a line is not line protocol.
func syntaxReason(err error) string {
	var de *lineprotocol.DecodeError
	if errors.As(err, &de) {
		return fmt.Sprintf("column %d: %v", de.Column, de.Err)
	}
	return err.Error()
}

// maxExcerpt is how much of a bad line a problem quotes.
const maxExcerpt = 64

// excerpt returns the start of a line, cut on a rune boundary, with
// invalid UTF-8 replaced.
func excerpt(line []byte) string {
	if len(line) <= maxExcerpt {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(line[:cut]), "\uFFFD") + "…"
}
