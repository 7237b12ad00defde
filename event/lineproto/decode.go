package lineproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/timetabledb/timetable/event"
)

// Options say how to read a body.
type Options struct {
	// Limits are the events' limits (event.Limits); Limits.Precision is
	// the unit of timestamps, event.PrecisionAuto meaning nanoseconds,
	// line protocol's default.
	Limits event.Limits
	// Now is the time the body was received: the time of lines without a
	// timestamp, and the now of event.Check.
	Now time.Time
	// Table, when set, names the logical table of every line instead of
	// its measurement.
	Table string
	// Series, when set, is the series of every line instead of its tag
	// set; the tags are still kept as fields.
	Series string
}

// Table is the events of one logical table in a body, in the order of
// their lines.
type Table struct {
	// Name is the measurement, or Options.Table.
	Name string
	// Events are the table's events, valid by package event's rules.
	Events event.Batch
	// Lines holds the line number of each event: Lines[i] is that of
	// Events.Event(i).
	Lines []int
}

// Problems re-addresses the problems a writer found in t's events (an
// engine's check: past retention, too large as an item) to their lines.
func (t Table) Problems(be *event.BatchError) []Problem {
	out := make([]Problem, len(be.Problems))
	for i, p := range be.Problems {
		out[i] = Problem{Line: t.Lines[p.Index], Reason: p.Reason}
	}
	return out
}

// Decode reads a line protocol body into events grouped by table, the
// tables in the order they first appear. When any line is bad it
// returns an *Error naming every bad line, and no table. Invalid limits
// give an error wrapping event.ErrInvalidLimits.
func Decode(body []byte, o Options) ([]Table, error) {
	if err := o.Limits.Validate(); err != nil {
		return nil, err
	}
	unit := o.Limits.Precision
	if unit == event.PrecisionAuto {
		unit = event.PrecisionNanos
	}
	r := reader{opts: o, unit: unit, receiveTime: o.Now.UTC().Truncate(unitDuration(unit)), names: map[string]string{}}
	lines, problems := splitLines(body)
	points, ok := []point(nil), false
	if problems == nil {
		points, ok = r.whole(body, lines)
	}
	if !ok {
		points, problems = r.eachLine(lines, problems)
	}
	var tables []*pending
	byName := map[string]*pending{}
	for _, p := range points {
		t := byName[p.table]
		if t == nil {
			t = &pending{name: p.table}
			byName[p.table] = t
			tables = append(tables, t)
		}
		t.n++
	}
	for _, t := range tables {
		t.events, t.lines, t.text = make([]event.Event, 0, t.n), make([]int, 0, t.n), make([][]byte, 0, t.n)
	}
	for _, p := range points {
		t := byName[p.table]
		t.events = append(t.events, p.event)
		t.lines = append(t.lines, p.line.no)
		t.text = append(t.text, p.line.text)
	}
	out := make([]Table, 0, len(tables))
	for _, t := range tables {
		b, err := event.Check(t.events, o.Limits, o.Now)
		var be *event.BatchError
		if errors.As(err, &be) {
			for _, p := range be.Problems {
				problems = append(problems, Problem{Line: t.lines[p.Index], Text: excerpt(t.text[p.Index]), Reason: seriesReason(p.Reason, o.Series != "")})
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Table{Name: t.name, Events: b, Lines: t.lines})
	}
	if problems != nil {
		slices.SortFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
		return nil, &Error{Problems: problems}
	}
	return out, nil
}

// line is a line of a body that is neither blank nor a comment.
type line struct {
	no   int
	text []byte
}

// point is a line read into an event of a table.
type point struct {
	line  line
	table string
	event event.Event
}

// splitLines returns the lines of a body that are neither blank nor
// comments, and the problems of bad comments.
func splitLines(body []byte) ([]line, []Problem) {
	lines := make([]line, 0, bytes.Count(body, []byte("\n"))+1)
	var problems []Problem
	for no := 1; len(body) > 0; no++ {
		text := body
		if nl := bytes.IndexByte(body, '\n'); nl >= 0 {
			text, body = body[:nl], body[nl+1:]
		} else {
			body = nil
		}
		text = bytes.TrimSuffix(text, []byte("\r"))
		skip, reason := skipped(text)
		if bytes.HasSuffix(text, []byte("\r")) {
			// A line decoder would take it for the end of its input.
			reason = fmt.Sprintf("column %d: a carriage return not before a newline", len(text))
		}
		switch {
		case reason != "":
			problems = append(problems, Problem{Line: no, Text: excerpt(text), Reason: reason})
		case !skip:
			lines = append(lines, line{no: no, text: text})
		}
	}
	return lines, problems
}

// whole reads a body with one decoder, which is the fast way, and
// reports whether that read it right: when every entry the decoder finds
// is one of the lines, in order. That holds unless a string field holds
// a newline (the one way an entry spans lines), and is checked: any
// error, an entry with a newline, or a count of entries other than of
// lines, and the body is read a line at a time instead (eachLine), which
// names each bad line.
func (r *reader) whole(body []byte, lines []line) ([]point, bool) {
	d := lineprotocol.NewDecoderWithBytes(body)
	points := make([]point, 0, len(lines))
	for d.Next() {
		if len(points) == len(lines) {
			return nil, false
		}
		table, ev, reason := r.entry(d)
		if reason != "" || r.newline {
			return nil, false
		}
		points = append(points, point{line: lines[len(points)], table: table, event: ev})
	}
	return points, len(points) == len(lines)
}

// eachLine reads every line with a decoder of its own, adding the
// problems of bad lines to problems.
func (r *reader) eachLine(lines []line, problems []Problem) ([]point, []Problem) {
	points := make([]point, 0, len(lines))
	for _, l := range lines {
		if bytes.IndexByte(l.text, ' ') < 0 {
			problems = append(problems, Problem{Line: l.no, Text: excerpt(l.text), Reason: reasonNoFields})
			continue
		}
		d := lineprotocol.NewDecoderWithBytes(l.text)
		d.Next()
		table, ev, reason := r.entry(d)
		if reason != "" {
			problems = append(problems, Problem{Line: l.no, Text: excerpt(l.text), Reason: reason})
			continue
		}
		points = append(points, point{line: l, table: table, event: ev})
	}
	return points, problems
}

// pending is a table's events before they are checked.
type pending struct {
	name   string
	n      int
	events []event.Event
	lines  []int
	text   [][]byte
}

// skipped reports whether a line is blank (spaces only) or a comment,
// or why it is a bad comment: one with a control character.
func skipped(line []byte) (bool, string) {
	line = bytes.TrimLeft(line, " ")
	if len(line) == 0 {
		return true, ""
	}
	if line[0] != '#' {
		return false, ""
	}
	for i, c := range line {
		if c < 0x20 || c == 0x7f {
			return false, fmt.Sprintf("column %d: control character %U in a comment", i+1, rune(c))
		}
	}
	return true, ""
}

// seriesReason words a problem of the series, which a line's tag set
// makes, as one of the tag set.
func seriesReason(reason string, configured bool) string {
	if rest, ok := strings.CutPrefix(reason, "series: "); ok && !configured {
		return "tag set, the series: " + rest
	}
	return reason
}

// reasonNoFields refuses a line without fields.
const reasonNoFields = "no field: a line is measurement[,tag=value...] field=value[,...] [timestamp]"

// reader turns lines into events.
type reader struct {
	opts        Options
	unit        event.Precision
	receiveTime time.Time
	// names interns measurement, tag and field names, tag values and
	// series, which repeat across a body.
	names map[string]string
	tags  []tag
	buf   []byte
	// newline says the last entry read has a string holding a newline.
	newline bool
}

type tag struct{ key, value string }

// entry reads the entry d is at: its table and event, or why it is
// refused. It sets r.newline when a string field holds a newline.
func (r *reader) entry(d *lineprotocol.Decoder) (table string, ev event.Event, reason string) {
	r.newline = false
	m, err := d.Measurement()
	if err != nil {
		return "", ev, syntaxReason(err)
	}
	table = r.opts.Table
	if table == "" {
		table = r.intern(m)
	}
	r.tags = r.tags[:0]
	for {
		k, v, err := d.NextTag()
		if err != nil {
			return "", ev, syntaxReason(err)
		}
		if k == nil {
			break
		}
		r.tags = append(r.tags, tag{key: r.intern(k), value: r.intern(v)})
	}
	ev.Fields = make(map[string]any, len(r.tags)+4)
	for _, t := range r.tags {
		if _, ok := ev.Fields[t.key]; ok {
			return "", ev, fmt.Sprintf("tag %q appears twice", t.key)
		}
		ev.Fields[t.key] = t.value
	}
	tagCount := len(ev.Fields)
	for {
		k, kind, raw, err := d.NextFieldBytes()
		if err != nil {
			return "", ev, syntaxReason(err)
		}
		if k == nil {
			break
		}
		v, err := lineprotocol.NewValueFromBytes(kind, raw)
		if err != nil {
			return "", ev, fmt.Sprintf("field %q: %v", k, err)
		}
		name := r.intern(k)
		if _, ok := ev.Fields[name]; ok {
			if slices.ContainsFunc(r.tags, func(t tag) bool { return t.key == name }) {
				return "", ev, fmt.Sprintf("%q is both a tag and a field", name)
			}
			return "", ev, fmt.Sprintf("field %q appears twice", name)
		}
		value, reason := r.fieldValue(v, raw)
		if reason != "" {
			return "", ev, fmt.Sprintf("field %q: %s", name, reason)
		}
		ev.Fields[name] = value
		if v.Kind() == lineprotocol.String && bytes.ContainsAny(v.BytesV(), "\r\n") {
			r.newline = true
		}
	}
	if len(ev.Fields) == tagCount {
		return "", ev, reasonNoFields
	}
	ts, err := d.TimeBytes()
	if err != nil {
		return "", ev, syntaxReason(err)
	}
	if ts == nil {
		ev.Time = r.receiveTime
	} else {
		n, err := strconv.ParseInt(string(ts), 10, 64)
		if err != nil {
			return "", ev, fmt.Sprintf("timestamp %s: not an integer of 64 bits", ts)
		}
		if ev.Time, err = r.unit.Time(n); err != nil {
			return "", ev, "timestamp: " + err.Error()
		}
	}
	ev.Series = r.opts.Series
	if ev.Series == "" && len(r.tags) > 0 {
		r.buf = appendSeries(r.buf[:0], r.tags)
		ev.Series = r.intern(r.buf)
	}
	return table, ev, ""
}

// intern returns b as a string, shared with earlier equal ones.
func (r *reader) intern(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.names) < maxInterned {
		r.names[s] = s
	}
	return s
}

// maxInterned bounds the names a body's reader keeps.
const maxInterned = 4096

// fieldValue is a field's value as an event field holds it, or a reason
// to refuse the line. A number is kept as it was written, in canonical
// form, under the JSON path's rules (appendNumber).
func (r *reader) fieldValue(v lineprotocol.Value, raw []byte) (any, string) {
	switch v.Kind() {
	case lineprotocol.Int, lineprotocol.Uint, lineprotocol.Float:
		b, reason := appendNumber(r.buf[:0], raw)
		if reason != "" {
			return nil, reason
		}
		r.buf = b
		return json.Number(b), ""
	case lineprotocol.Bool:
		return v.BoolV(), ""
	default:
		return v.StringV(), ""
	}
}

// appendSeries appends the series of a tag set: sorted by key, written
// as line protocol writes it, with ",", "=" and " " escaped.
func appendSeries(b []byte, tags []tag) []byte {
	slices.SortFunc(tags, func(a, b tag) int { return strings.Compare(a.key, b.key) })
	for i, t := range tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEscaped(b, t.key)
		b = append(b, '=')
		b = appendEscaped(b, t.value)
	}
	return b
}

// appendEscaped appends a tag key or value escaped as line protocol
// escapes it.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '=' || c == ' ' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}

// unitDuration is the length of a precision's unit.
func unitDuration(p event.Precision) time.Duration {
	switch p {
	case event.PrecisionSeconds:
		return time.Second
	case event.PrecisionMillis:
		return time.Millisecond
	case event.PrecisionMicros:
		return time.Microsecond
	}
	return time.Nanosecond
}
