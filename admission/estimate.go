package admission

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/timetabledb/timetable/event"
)

// The estimate of what an event takes in memory once decoded, and while
// the engine writes it: the Event, its strings and fields as the decoder
// builds them (each counted in full, though the decoders share repeated
// names and series), and the item the engine makes of it, taken as
// twice the decoded event plus itemOverhead. The figures are
// deliberately high, about what a decode and a write allocate in all
// (server's TestMemoryIsBoundedInWhatRequestsHold holds the process to
// its aim under them).
const (
	eventSize    = int64(unsafe.Sizeof(event.Event{}))
	stringHeader = int64(unsafe.Sizeof(""))
	anyHeader    = int64(unsafe.Sizeof(any(nil)))
	sliceHeader  = int64(unsafe.Sizeof([]any(nil)))
	// mapOverhead is a small map's header and first group.
	mapOverhead = 208
	// mapEntry is a map entry's share of its group, beyond its key and
	// value.
	mapEntry = 16
	// itemOverhead is what the engine's item of an event holds besides
	// the event's own strings and fields: keys, the id, attribute names,
	// and the store's batch. Measured: writing 100,000 minimal events to
	// Pebble allocates about 980 bytes an event in all.
	itemOverhead = 860
)

// EventBytes returns the estimate of the memory an event takes decoded
// and on its way into the store.
func EventBytes(e *event.Event) int64 {
	n := eventSize + int64(len(e.Series)+len(e.ID))
	if e.Fields != nil {
		n += valueBytes(e.Fields)
	}
	return 2*n + itemOverhead
}

// BatchBytes returns the estimate of the memory a batch's events take
// decoded and on their way into the store: the sum of EventBytes.
func BatchBytes(b event.Batch) int64 {
	var n int64
	for i := range b.Len() {
		e := b.Event(i)
		n += EventBytes(&e)
	}
	return n
}

// BodyBytes returns the estimate, made before decoding, of what the
// events of a body of size bytes holding at most events events take
// decoded: each of them as EventBytes of a bare event, and six times the
// body's bytes for their strings and fields (a short field, "a":1,
// decodes to about 60 bytes, twice over with the item). It is not always
// above BatchBytes of what the body decodes to (a body of many tiny
// fields decodes to more); the caller trims or grows its share to
// BatchBytes once decoded.
func BodyBytes(size int64, events int) int64 {
	bare := event.Event{}
	return int64(events)*EventBytes(&bare) + 6*size
}

// SmallestRequestBytes returns the estimate of the events of the
// smallest request of events events, each without series, id or fields:
// an events budget smaller than SmallestRequestBytes of the most events
// a request may hold refuses some valid requests as too large whatever
// their bytes.
func SmallestRequestBytes(events int) int64 {
	bare := event.Event{}
	return int64(events) * EventBytes(&bare)
}

// A writer (the engine) turns a request's events into items a group at
// a time: at most WriteGroupEvents events, and WriteGroupBytes bytes of
// their fields as a Batch holds them (event.Batch.FieldsBytes), though
// always one event at least, so that what it builds while it writes is
// bounded whatever the size of the request.
const (
	WriteGroupEvents = 1024
	WriteGroupBytes  = 256 << 10
)

// EventsUpperBound returns at least the number of events a body decodes
// to, cheaply: its lines for NDJSON and line protocol (lines), its
// objects for JSON (an array, NDJSON or one event).
func EventsUpperBound(body []byte, lines bool) int {
	if lines {
		return bytes.Count(body, []byte{'\n'}) + 1
	}
	return bytes.Count(body, []byte{'{'})
}

// valueBytes estimates a field value: its header and what it points to.
func valueBytes(v any) int64 {
	switch v := v.(type) {
	case string:
		return anyHeader + stringHeader + int64(len(v))
	case json.Number:
		return anyHeader + stringHeader + int64(len(v))
	case map[string]any:
		n := anyHeader + mapOverhead
		for k, x := range v {
			n += mapEntry + stringHeader + int64(len(k)) + valueBytes(x)
		}
		return n
	case []any:
		n := anyHeader + sliceHeader
		for _, x := range v {
			n += valueBytes(x)
		}
		return n
	default:
		return anyHeader + 8
	}
}
