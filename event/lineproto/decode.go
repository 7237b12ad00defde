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
// give an error wrapping event.ErrInvalidLimits. Once the body's
// numbers, in canonical form, take more than event.DecodedTextBound of
// the body, it stops and returns an *event.DecodedTooLargeError.
//
// A line's event is built as an event.Event, whose fields are a map, and
// packed into its table's event.Batch (columns, event.Check) once
// packEvery of the table's lines, or packBytes of them, are read: what a
// body holds while it is read is its columns and a bounded number of
// events of each table, not an Event per line.
func Decode(body []byte, o Options) ([]Table, error) {
	if err := o.Limits.Validate(); err != nil {
		return nil, err
	}
	unit := o.Limits.Precision
	if unit == event.PrecisionAuto {
		unit = event.PrecisionNanos
	}
	r := reader{opts: o, unit: unit, receiveTime: o.Now.UTC().Truncate(unitDuration(unit)), names: map[string]string{}}
	r.numberLimit = event.DecodedTextBound(len(body))
	lines, problems := splitLines(body)
	var s *sink
	ok := false
	if problems == nil {
		s = newSink(o)
		ok = r.whole(body, lines, s)
	}
	if !ok && !r.tooLarge {
		s = newSink(o)
		r.numberBytes = 0
		problems = r.eachLine(lines, problems, s)
	}
	if r.tooLarge {
		return nil, &event.DecodedTooLargeError{Size: len(body), Limit: r.numberLimit}
	}
	out, err := s.tables(problems)
	if err != nil {
		return nil, err
	}
	if problems = s.problems; problems != nil {
		slices.SortFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
		return nil, &Error{Problems: problems}
	}
	return out, nil
}

// Decode holds at most packEvery of a table's events as Events, read
// from lines of at most about packBytes, before it packs them into the
// table's batch.
const (
	packEvery = 1024
	packBytes = 256 << 10
)

// sink takes a body's events a line at a time, by table, and packs each
// table's into batches of packEvery events.
type sink struct {
	opts     Options
	byName   map[string]*pending
	order    []*pending
	problems []Problem
	err      error
}

// pending is a table's events: those packed, and those read since.
type pending struct {
	name    string
	batches []event.Batch
	lines   []int // the line of every event, packed or not
	events  []event.Event
	text    [][]byte // the text of each event not yet packed
	// textBytes is the length of text's lines.
	textBytes int
}

func newSink(o Options) *sink { return &sink{opts: o, byName: map[string]*pending{}} }

// add takes the event of a line.
func (s *sink) add(l line, table string, ev event.Event) {
	t := s.byName[table]
	if t == nil {
		t = &pending{name: table}
		s.byName[table] = t
		s.order = append(s.order, t)
	}
	t.lines = append(t.lines, l.no)
	t.events = append(t.events, ev)
	t.text = append(t.text, l.text)
	t.textBytes += len(l.text)
	if len(t.events) == packEvery || t.textBytes >= packBytes {
		s.pack(t)
	}
}

// pack checks a table's events read since its last pack into a batch of
// it, or records their problems.
func (s *sink) pack(t *pending) {
	if len(t.events) == 0 || s.err != nil {
		return
	}
	first := len(t.lines) - len(t.events) // the index of t.events[0] in t.lines
	b, err := event.Check(t.events, s.opts.Limits, s.opts.Now)
	var be *event.BatchError
	switch {
	case errors.As(err, &be):
		for _, p := range be.Problems {
			s.problems = append(s.problems, Problem{Line: t.lines[first+p.Index], Text: excerpt(t.text[p.Index]), Reason: seriesReason(p.Reason, s.opts.Series != "")})
		}
	case err != nil:
		s.err = err
	default:
		t.batches = append(t.batches, b)
	}
	clear(t.events)
	clear(t.text)
	t.events, t.text, t.textBytes = t.events[:0], t.text[:0], 0
}

// tables packs what is left and returns the tables, or the error of a
// check that failed other than on an event. Once any line is bad (the
// caller's problems or the sink's), the batches are left unjoined.
func (s *sink) tables(problems []Problem) ([]Table, error) {
	for _, t := range s.order {
		s.pack(t)
	}
	if s.err != nil {
		return nil, s.err
	}
	s.problems = append(problems, s.problems...)
	if s.problems != nil {
		return nil, nil
	}
	out := make([]Table, 0, len(s.order))
	for _, t := range s.order {
		out = append(out, Table{Name: t.name, Events: event.Join(t.batches...), Lines: t.lines})
	}
	return out, nil
}

// line is a line of a body that is neither blank nor a comment.
type line struct {
	no   int
	text []byte
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

// whole reads a body with one decoder, which is the fast way, into s,
// and reports whether that read it right: when every entry the decoder finds
// is one of the lines, in order. That holds unless a string field holds
// a newline (the one way an entry spans lines), and is checked: any
// error, an entry with a newline, or a count of entries other than of
// lines, and the body is read a line at a time instead (eachLine), which
// names each bad line.
func (r *reader) whole(body []byte, lines []line, s *sink) bool {
	d := lineprotocol.NewDecoderWithBytes(body)
	n := 0
	for d.Next() {
		if n == len(lines) {
			return false
		}
		table, ev, reason := r.entry(d)
		if reason != "" || r.newline || r.tooLarge {
			return false
		}
		s.add(lines[n], table, ev)
		n++
	}
	return n == len(lines)
}

// eachLine reads every line with a decoder of its own into s, adding
// the problems of bad lines to problems.
func (r *reader) eachLine(lines []line, problems []Problem, s *sink) []Problem {
	for _, l := range lines {
		if bytes.IndexByte(l.text, ' ') < 0 {
			problems = append(problems, Problem{Line: l.no, Text: excerpt(l.text), Reason: reasonNoFields})
			continue
		}
		d := lineprotocol.NewDecoderWithBytes(l.text)
		d.Next()
		table, ev, reason := r.entry(d)
		if r.tooLarge {
			return problems
		}
		if reason != "" {
			problems = append(problems, Problem{Line: l.no, Text: excerpt(l.text), Reason: reason})
			continue
		}
		s.add(l, table, ev)
	}
	return problems
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
	// numberBytes is the length of the numbers read, in canonical form;
	// once it passes numberLimit (event.DecodedTextBound of the body),
	// tooLarge is set and the body is refused (fieldValue).
	numberBytes int64
	numberLimit int64
	tooLarge    bool
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
		if r.numberBytes += int64(len(b)); r.numberBytes > r.numberLimit {
			r.tooLarge = true
			return nil, "numbers too long decoded"
		}
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
	case event.PrecisionHours:
		return time.Hour
	case event.PrecisionMinutes:
		return time.Minute
	case event.PrecisionSeconds:
		return time.Second
	case event.PrecisionMillis:
		return time.Millisecond
	case event.PrecisionMicros:
		return time.Microsecond
	}
	return time.Nanosecond
}
