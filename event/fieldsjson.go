package event

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// FieldsJSON writes events as AppendJSON does from fields handed to it one
// at a time, in any order, rather than held in a map: a reader that walks
// a stored item's attributes in place (storage.Iterator.Attrs) writes the
// event's JSON without building its Fields. The zero value is ready to
// use, and its buffers serve event after event.
type FieldsJSON struct {
	// buf holds each field added: its name, then its "name":value.
	buf    []byte
	fields []fieldJSON
	err    error
}

// fieldJSON is a field in FieldsJSON.buf: its name is buf[start:pair],
// its encoding buf[pair:end].
type fieldJSON struct{ start, pair, end int }

// Add adds a field to the next event. It encodes name and v at once, so
// they need be valid only during the call. A value AppendJSON refuses
// fails the next AppendEvent.
func (f *FieldsJSON) Add(name string, v any) {
	if f.err != nil {
		return
	}
	start := len(f.buf)
	f.buf = append(f.buf, name...)
	pair := len(f.buf)
	f.buf = appendString(f.buf, name)
	f.buf = append(f.buf, ':')
	var err error
	if f.buf, err = appendValue(f.buf, v); err != nil {
		f.err = fmt.Errorf("encode event: field %q: %w", name, err)
		return
	}
	f.fields = append(f.fields, fieldJSON{start: start, pair: pair, end: len(f.buf)})
}

// AppendEvent appends to dst the JSON that AppendJSON writes of the event
// at t of the series with the id and the fields added since the last
// AppendEvent or Reset, their names distinct, and starts the next event.
func (f *FieldsJSON) AppendEvent(dst []byte, t time.Time, series, id string) ([]byte, error) {
	defer f.Reset()
	if f.err != nil {
		return nil, f.err
	}
	f.sort()
	dst = appendHead(dst, t, series, id)
	dst = append(dst, '{')
	for i, fj := range f.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, f.buf[fj.pair:fj.end]...)
	}
	return append(dst, '}', '}'), nil
}

// sort orders the fields by name, bytewise, as AppendJSON does. An
// event has a few fields, whose names mostly differ in their first
// byte: an insertion sort that compares those first does with little.
func (f *FieldsJSON) sort() {
	fields := f.fields
	less := func(a, b fieldJSON) bool {
		x, y := f.buf[a.start:a.pair], f.buf[b.start:b.pair]
		if len(x) > 0 && len(y) > 0 && x[0] != y[0] {
			return x[0] < y[0]
		}
		return bytes.Compare(x, y) < 0
	}
	if len(fields) > 16 {
		slices.SortFunc(fields, func(a, b fieldJSON) int {
			return bytes.Compare(f.buf[a.start:a.pair], f.buf[b.start:b.pair])
		})
		return
	}
	for i := 1; i < len(fields); i++ {
		for j := i; j > 0 && less(fields[j], fields[j-1]); j-- {
			fields[j], fields[j-1] = fields[j-1], fields[j]
		}
	}
}

// Len returns the bytes the fields added since the last AppendEvent or
// Reset hold, a bound on what their JSON takes in the event.
func (f *FieldsJSON) Len() int { return len(f.buf) }

// Reset drops the fields added since the last AppendEvent.
func (f *FieldsJSON) Reset() {
	f.buf, f.fields, f.err = f.buf[:0], f.fields[:0], nil
}
