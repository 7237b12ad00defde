package admission

import (
	"bytes"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// The estimate of what a request's events take in memory once decoded,
// and while the engine writes them: the Batch, whose columns say what
// they hold (event.Batch.Bytes), and what the engine builds from one
// span of them at a time (WriteSpanEvents, WriteSpanBytes): each
// event's Fields, its item and the store's batch, taken as itemBytes an
// event and fieldsGrowth times its fields as the Batch holds them. The
// figures are deliberately high (server's
// TestMemoryIsBoundedInWhatRequestsHold holds the process to its aim
// under them).
const (
	// itemBytes is what the engine's item of an event holds besides
	// its fields: keys, the id, and the store's batch.
	itemBytes = 1024
	// fieldsGrowth is how many times its encoded size an event's fields
	// take built and written: a number of one digit, three bytes
	// encoded, is an interface and a string header in a list, and an
	// attribute value on its way to DynamoDB.
	fieldsGrowth = 32
	// indexBytes is what the engine holds for each event of a request
	// whose write failed: its index among the unwritten.
	indexBytes = 8
	// lineBodyGrowth is how many times its size a line protocol body
	// takes while it is decoded: its Batch, and each table's lines read
	// since its last pack as Events with a map of fields (lineproto
	// packs them every thousand lines or 256 KiB), an allowance above
	// what the largest shapes hold (lineproto's
	// TestDecodeALongBodyPacksAsItGoes reads such a body back).
	lineBodyGrowth = 6
)

// BatchBytes returns the estimate of the memory a batch's events take
// decoded and on their way into the store: what the Batch holds, and
// what the engine builds from the largest span it writes at once
// (WriteSpanEnd).
func BatchBytes(b event.Batch) int64 {
	var most int64
	for from, to := 0, 0; from < b.Len(); from = to {
		to = WriteSpanEnd(b, from)
		var fields int64
		for i := from; i < to; i++ {
			if n := int64(b.FieldsBytes(i)); n <= MaxFieldsBytes {
				fields += n
			}
		}
		most = max(most, writeBytes(to-from, fields, fields))
	}
	return b.Bytes() + int64(b.Len())*indexBytes + most
}

// WriteSpanEnd returns the end of the span of b's events that starts
// at from: at most WriteSpanEvents events, and WriteSpanBytes bytes of
// their fields, one event at least.
func WriteSpanEnd(b event.Batch, from int) int {
	n := b.Len()
	to, bytes := from, 0
	for to < n && to-from < WriteSpanEvents {
		bytes += b.FieldsBytes(to)
		if bytes > WriteSpanBytes && to > from {
			break
		}
		to++
	}
	return to
}

// writeBytes is what the engine builds while it writes events events
// whose fields take fields bytes in a Batch, the largest event's
// largest: one span of them (WriteSpanEvents, WriteSpanBytes).
func writeBytes(events int, fields, largest int64) int64 {
	return int64(min(events, WriteSpanEvents))*itemBytes + min(fields, max(WriteSpanBytes, largest))*fieldsGrowth
}

// BodyBytes returns the estimate, made before decoding, of what the
// events of a body of size bytes holding at most events events take
// decoded and written: the most the Batch of such a body holds
// (event.DecodedBytesBound) and what the engine builds from a span of
// them, or what a line protocol body of that size takes while it is
// decoded, lineBodyGrowth times its size, if that is more. It is an
// upper bound; the caller trims its share to BatchBytes once decoded.
func BodyBytes(size int64, events int) int64 {
	decoded := event.DecodedBytesBound(size, events)
	return max(decoded+writeBytes(events, decoded, min(decoded, MaxFieldsBytes)), lineBodyGrowth*size)
}

// SmallestRequestBytes returns the estimate of the events of the
// smallest request of events events, each without series, id or fields:
// an events budget smaller than SmallestRequestBytes of the most events
// a request may hold refuses some valid requests as too large whatever
// their bytes.
func SmallestRequestBytes(events int) int64 {
	return event.BareBatchBytes(events) + int64(events)*indexBytes + writeBytes(events, 2*int64(events), 2)
}

// A writer (the engine) turns a request's events into items a span at
// a time: at most WriteSpanEvents events, and WriteSpanBytes bytes of
// their fields as a Batch holds them (event.Batch.FieldsBytes), though
// always one event at least, so that what it builds while it writes is
// bounded whatever the size of the request.
//
// An event whose fields take more than MaxFieldsBytes in a Batch is
// refused unbuilt: no encoding of fields takes more than four times
// what they take in a stored item, so its item would be over
// storage.MaxItemSize.
const (
	WriteSpanEvents = 1024
	WriteSpanBytes  = 256 << 10
	MaxFieldsBytes  = 4 * storage.MaxItemSize
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
