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
	dst = append(dst, `{"start":"`...)
	dst = b.Start.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","end":"`...)
	dst = b.End.AppendFormat(dst, time.RFC3339Nano)
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
	// The names of a few fields and functions, the common case, are
	// sorted on the stack.
	var fewFields, fewFns [8]string
	for i, field := range sortedKeys(fewFields[:0], b.Values) {
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
		for j, fn := range sortedKeys(fewFns[:0], results) {
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

// sortedKeys appends a map's keys to keys, in the order encoding/json
// writes them.
func sortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
