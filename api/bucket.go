package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/timetabledb/timetable/jsonnum"
)

// Bucket is one time bucket of an aggregate. The engine's aggregates
// return it as it is (engine.Bucket is this type), and the server writes
// it with AppendJSON: an aggregate's answer is mostly buckets.
type Bucket struct {
	// Start and End are the exact span the bucket covers, [Start, End):
	// a whole aligned bucket (a calendar month is as long as its month),
	// or, at the edges of the query's range, the part of it inside
	// [From, To] (To is inclusive, so such a bucket ends a nanosecond
	// after To).
	Start, End time.Time
	// Partial marks an edge bucket cut by the range: its events are
	// those of its span, not of the whole aligned bucket.
	Partial bool
	// Events is the number of events in the bucket.
	Events int64
	// Values holds, per field, per function, the result: counts are
	// int64; sums, minimums and maximums exact decimals, and averages
	// decimals of a fixed number of significant digits, as json.Number
	// in the canonical form of event numbers; first and last the value as
	// stored.
	Values map[string]map[string]any
}

// MarshalJSON writes a bucket as the HTTP API and the CLI show it:
// {"start": RFC 3339, "end": RFC 3339, "partial": true (edge buckets only),
// "events": N, "values": {field: {fn: result}}}.
func (b Bucket) MarshalJSON() ([]byte, error) {
	return b.AppendJSON(nil)
}

// AppendJSON appends the bucket's MarshalJSON encoding to dst: the bytes
// encoding/json writes for a bucketJSON, written without reflection (an
// aggregate's answer is mostly this), counts and numbers as they are and
// any other value through encoding/json.
func (b Bucket) AppendJSON(dst []byte) ([]byte, error) {
	var names bucketNames
	return b.appendJSON(dst, &names)
}

// bucketNames are the sorted names of the fields of the bucket written
// last, and of the functions of its field written last. The buckets of
// one answer have the same names as a rule: a bucket whose maps hold
// exactly these names, which a look-up of each tells, is written in their
// order, with no range over its maps and no sort.
type bucketNames struct {
	fields, fns       []string
	fieldsBuf, fnsBuf [8]string
}

// appendJSON is AppendJSON with the names of the bucket written before.
func (b Bucket) appendJSON(dst []byte, names *bucketNames) ([]byte, error) {
	dst = append(dst, `{"start":"`...)
	dst = appendTime(dst, b.Start)
	dst = append(dst, `","end":"`...)
	dst = appendTime(dst, b.End)
	dst = append(dst, '"')
	if b.Partial {
		dst = append(dst, `,"partial":true`...)
	}
	dst = append(dst, `,"events":`...)
	dst = strconv.AppendInt(dst, b.Events, 10)
	dst = append(dst, `,"values":`...)
	if b.Values == nil {
		return append(dst, "null}"...), nil
	}
	dst = append(dst, '{')
	var err error
	names.fields = sortedNames(names.fields, names.fieldsBuf[:0], b.Values)
	for i, field := range names.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, field)
		dst = append(dst, ':')
		results := b.Values[field]
		if results == nil {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, '{')
		names.fns = sortedNames(names.fns, names.fnsBuf[:0], results)
		for j, fn := range names.fns {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, fn)
			dst = append(dst, ':')
			if dst, err = appendResult(dst, results[fn]); err != nil {
				return nil, fmt.Errorf("encode bucket %s: %s %s: %w", b.Start.Format(time.RFC3339Nano), field, fn, err)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, "}}"...), nil
}

// sortedNames returns a map's keys in the order encoding/json writes
// them: known, when the map holds exactly the keys known holds (sorted
// and distinct), else the keys appended to buf and sorted. known may be
// of buf's array: it is read before buf is written.
func sortedNames[V any](known, buf []string, m map[string]V) []string {
	if len(known) == len(m) {
		same := true
		for _, k := range known {
			if _, ok := m[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return known
		}
	}
	return sortedKeys(buf, m)
}

// sortedKeys appends a map's keys to keys, in the order encoding/json
// writes them.
func sortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendTime appends t as t.AppendFormat(dst, time.RFC3339Nano) does,
// without its parsing of the layout for a time in UTC of a four-digit
// year, the buckets' times.
func appendTime(dst []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if t.Location() != time.UTC || year < 0 || year > 9999 {
		return t.AppendFormat(dst, time.RFC3339Nano)
	}
	hour, minute, second := t.Clock()
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, second, 2)
	if ns := t.Nanosecond(); ns != 0 {
		// Nine digits, less the trailing zeros.
		digits := 9
		for ns%10 == 0 {
			ns /= 10
			digits--
		}
		dst = append(dst, '.')
		dst = appendDigits(dst, ns, digits)
	}
	return append(dst, 'Z')
}

// appendDigits appends n, at least 0, in width digits, zeros first.
func appendDigits(dst []byte, n, width int) []byte {
	var buf [9]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, buf[:width]...)
}

// appendResult appends one result of a bucket as encoding/json does.
func appendResult(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case json.Number:
		if jsonnum.Valid(string(v)) {
			return append(dst, v...), nil
		}
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

// appendJSONString appends s as encoding/json writes a string: a plain
// one, of printable ASCII that HTML does not escape, as it is, and any
// other through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// bucketJSON is a Bucket as JSON.
type bucketJSON struct {
	Start   string                    `json:"start"`
	End     string                    `json:"end"`
	Partial bool                      `json:"partial,omitempty"`
	Events  int64                     `json:"events"`
	Values  map[string]map[string]any `json:"values"`
}

// UnmarshalJSON reads what MarshalJSON writes, numbers among the values
// as json.Number, so that a bucket read from the HTTP API prints as the
// engine's own does.
func (b *Bucket) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var j bucketJSON
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*b = Bucket{Partial: j.Partial, Events: j.Events, Values: j.Values}
	var err error
	if b.Start, err = time.Parse(time.RFC3339Nano, j.Start); err != nil {
		return fmt.Errorf("bucket start: %w", err)
	}
	if b.End, err = time.Parse(time.RFC3339Nano, j.End); err != nil {
		return fmt.Errorf("bucket end: %w", err)
	}
	return nil
}
