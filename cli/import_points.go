package cli

import (
	"bytes"
)

// pointWindow gathers the lines of an import into points: influx_inspect
// export writes each field of a point on a line of its own (a series'
// fields one after another, each with all its times), and a point of
// InfluxDB is one event of timetable, so the lines of one measurement,
// tag set and timestamp are joined into one line before they are
// decoded. The window holds up to a bound of bytes, and ends between two
// series (full): a point whose lines lie further apart in the file than
// the window (a series' run of over twice the window, or lines of the
// WAL's part of an export, which are in no order) is stored as two events
// of one time and series, which the import counts and reports (split).
//
// Lines are joined as text, so that their values reach the decoder as
// written: the key (measurement and tags) of the first line, the fields
// of every line in the order first seen (a field twice keeps the later
// value, as InfluxDB overwrites it), and the timestamp. A line the
// splitter cannot take apart, or without a timestamp, is a point of its
// own, for the decoder to judge.
type pointWindow struct {
	points  []windowPoint
	byKey   map[string]int // index in points, by key and timestamp
	bytes   int
	lastKey []byte // the key of the last line added

	// prev holds the point keys of the window flushed before, to count
	// the points split across two windows.
	prev  map[string]bool
	split int
}

// windowPoint is one point of the window: the key and timestamp it is
// found by, its fields, and the file's line numbers it came from.
type windowPoint struct {
	key, ts []byte
	fields  []windowField
	lines   []int
	raw     []byte // a line the splitter could not take apart, as it was
}

type windowField struct{ name, value []byte }

// full reports whether the window, of max bytes, should be flushed
// before line is added: when it holds max bytes and line starts another
// series than the last line's, so that a series' run of lines is not cut
// in two; or, for a run longer than the window, when it holds twice max.
func (w *pointWindow) full(line []byte, max int) bool {
	if w.bytes < max {
		return false
	}
	key, _, _, _ := splitLine(line)
	return !bytes.Equal(key, w.lastKey) || w.bytes >= 2*max
}

// add puts one line (no newline) of file line number n in the window.
func (w *pointWindow) add(line []byte, n int) {
	if w.byKey == nil {
		w.byKey = map[string]int{}
	}
	w.bytes += len(line)
	key, fields, ts, ok := splitLine(line)
	w.lastKey = append(w.lastKey[:0], key...)
	parts := splitFields(fields)
	for _, f := range parts {
		ok = ok && indexUnescaped(f, '=', false) > 0
	}
	if !ok {
		w.points = append(w.points, windowPoint{raw: bytes.Clone(line), lines: []int{n}})
		return
	}
	id := string(key) + " " + string(ts)
	i, seen := w.byKey[id]
	if !seen {
		if w.prev[id] {
			w.split++
		}
		i = len(w.points)
		w.byKey[id] = i
		w.points = append(w.points, windowPoint{key: bytes.Clone(key), ts: bytes.Clone(ts)})
	}
	p := &w.points[i]
	p.lines = append(p.lines, n)
	for _, f := range parts {
		name, value, _ := cutUnescaped(f, '=')
		j := 0
		for j < len(p.fields) && !bytes.Equal(p.fields[j].name, name) {
			j++
		}
		if j == len(p.fields) {
			p.fields = append(p.fields, windowField{name: bytes.Clone(name)})
		}
		p.fields[j].value = bytes.Clone(value)
	}
}

// flush returns the window's points as lines of line protocol, with the
// file's line numbers of each, and empties the window.
func (w *pointWindow) flush() (body []byte, lines [][]int) {
	keys := make(map[string]bool, len(w.points))
	for _, p := range w.points {
		lines = append(lines, p.lines)
		if p.raw != nil {
			body = append(append(body, p.raw...), '\n')
			continue
		}
		keys[string(p.key)+" "+string(p.ts)] = true
		body = append(append(body, p.key...), ' ')
		for j, f := range p.fields {
			if j > 0 {
				body = append(body, ',')
			}
			body = append(append(append(body, f.name...), '='), f.value...)
		}
		body = append(append(append(body, ' '), p.ts...), '\n')
	}
	w.prev, w.points, w.byKey, w.bytes = keys, w.points[:0], nil, 0
	return body, lines
}

// splitLine cuts a line of line protocol into its key (measurement and
// tags), its fields and its timestamp, minding backslash escapes and
// double-quoted string fields; ok is false for a line without all three.
func splitLine(line []byte) (key, fields, ts []byte, ok bool) {
	line = bytes.TrimRight(line, "\r\n ")
	i := indexUnescaped(line, ' ', false)
	if i <= 0 {
		return nil, nil, nil, false
	}
	key, rest := line[:i], line[i+1:]
	j := indexUnescaped(rest, ' ', true)
	if j <= 0 {
		return nil, nil, nil, false
	}
	fields, ts = rest[:j], bytes.TrimSpace(rest[j+1:])
	if len(ts) == 0 || bytes.IndexByte(ts, ' ') >= 0 {
		return nil, nil, nil, false
	}
	return key, fields, ts, true
}

// splitFields cuts the fields of a line at its commas outside strings.
func splitFields(fields []byte) [][]byte {
	var out [][]byte
	for {
		i := indexUnescaped(fields, ',', true)
		if i < 0 {
			return append(out, fields)
		}
		out = append(out, fields[:i])
		fields = fields[i+1:]
	}
}

// cutUnescaped cuts b at its first unescaped c.
func cutUnescaped(b []byte, c byte) (before, after []byte, found bool) {
	i := indexUnescaped(b, c, false)
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

// indexUnescaped returns the index of the first c in b not escaped by a
// backslash and, with quotes, not inside a double-quoted string; -1 when
// there is none.
func indexUnescaped(b []byte, c byte, quotes bool) int {
	inString := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\':
			i++
		case quotes && b[i] == '"':
			inString = !inString
		case b[i] == c && !inString:
			return i
		}
	}
	return -1
}
