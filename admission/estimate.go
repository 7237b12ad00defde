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

// Format is how a body holds its events, as far as the estimate of
// what they take decoded goes (BodyBytes).
type Format int

const (
	// JSON is a body of JSON events of no known shape: a JSON array,
	// one event, or NDJSON that the decoder tells apart from them (an
	// MQTT payload). Any one event may take the whole body.
	JSON Format = iota
	// NDJSON is a body of one JSON event a line.
	NDJSON
	// LineProtocol is a body of InfluxDB line protocol, an event a
	// line.
	LineProtocol
)

// lines reports whether a body of the format holds an event a line.
func (f Format) lines() bool { return f == NDJSON || f == LineProtocol }

// BodyBytes returns the estimate, made before decoding, of what the
// events of body take decoded and written: the most the Batch of such a
// body holds (event.DecodedBytesBound, for at most the events
// EventsUpperBound counts) and what the engine builds from a span of
// them, or, for line protocol, what the body takes while it is decoded,
// lineBodyGrowth times its size, if that is more. It is an upper bound
// of BatchBytes of what the body decodes to; the caller trims its share
// to BatchBytes once decoded.
//
// An NDJSON body's span is bounded by its longest line: it holds no
// event whose fields take more than fieldsPerText times its longest
// line, and a span no more than WriteSpanEvents such events, so that a
// body of small events is not estimated as if one of them could fill an
// item (MaxFieldsBytes), which held a request of 100,000 minimal events
// at 70 MB rather than 23 MB. A JSON body's one event may be the whole
// body; a line protocol body's lines may each name a table of their own,
// whose events the engine builds as a span of their own, so that its
// estimate keeps to a span of an item's most.
func BodyBytes(body []byte, f Format) int64 {
	size := int64(len(body))
	events := EventsUpperBound(body, f)
	decoded := event.DecodedBytesBound(size, events)
	largest := min(MaxFieldsBytes, decoded)
	if f == NDJSON {
		largest = min(largest, fieldsPerText*longestLine(body)+fieldsOverhead)
	}
	n := decoded + writeBytes(events, min(decoded, int64(WriteSpanEvents)*largest), largest)
	if f == LineProtocol {
		n = max(n, lineBodyGrowth*size)
	}
	return n
}

// The most an event's fields take in a Batch, from the text of its
// line: fieldsPerText times it and fieldsOverhead more, above the one
// and a half times their text that JSON fields take at most
// (event.DecodedBytesBound; TestBodyBytesIsAnUpperBound checks the
// shapes that take the most).
const (
	fieldsPerText  = 2
	fieldsOverhead = 16
)

// longestLine returns the length of body's longest line.
func longestLine(body []byte) int64 {
	longest := 0
	for len(body) > 0 {
		n := bytes.IndexByte(body, '\n')
		if n < 0 {
			n = len(body)
		}
		longest = max(longest, n)
		body = body[min(n+1, len(body)):]
	}
	return int64(longest)
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

// EventsUpperBound returns at least the number of events a body of
// format f decodes to, cheaply: its lines for NDJSON and line protocol,
// its objects for JSON (an array, NDJSON or one event).
func EventsUpperBound(body []byte, f Format) int {
	if f.lines() {
		return bytes.Count(body, []byte{'\n'}) + 1
	}
	return bytes.Count(body, []byte{'{'})
}
