package event

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"sort"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// Batch is the events of one request once they have passed validation:
// what DecodeJSON and DecodeNDJSON return, and what Check makes of events
// built in Go. A writer (the engine's WriteBatch) takes a Batch without
// validating it again, so that a request's events are checked once.
//
// A Batch holds its events as columns, not as an Event each: their times
// in Unix nanoseconds, their series as indexes into a dictionary of the
// batch's series, their client ids (a column only once an event has
// one), and the fields of all of them, one after the other, in one
// string, each event's in the encoding its id hashes (see the package
// documentation's section on ids), whose maps are in bytewise key order,
// in strings of about fieldsChunk bytes (an event's fields in one).
// Event builds an event's Fields from that encoding when it is asked
// for; AssignID hashes it as it is. What a batch holds is Bytes.
//
// Its events cannot be changed through it: Event returns a new event,
// and a caller that edits decoded events (the CLI fills in a missing
// series) gets them with Events and must Check them again before they
// are a Batch, a rule the compiler keeps rather than a comment.
type Batch struct {
	// times holds each event's time in Unix nanoseconds (the times an
	// event may have, from 1970 to 2262, are those an int64 holds).
	times []int64
	// series holds each event's index into dict, the series of the batch
	// ("" among them when an event has none).
	series []uint32
	dict   []string
	// ends holds where each event's fields end, counted over the chunks
	// of fields one after the other; they start where the event
	// before's end. chunks[k] starts at bases[k].
	ends   []int
	chunks []string
	bases  []int
	// fieldsCap is the size of the memory the chunks are in.
	fieldsCap int
	// ids holds each event's client id; nil while no event has one.
	ids []string
}

// Len returns the number of events.
func (b Batch) Len() int { return len(b.times) }

// Time returns the time of event i, without building the event.
func (b Batch) Time(i int) time.Time { return time.Unix(0, b.times[i]).UTC() }

// Series returns the series of event i, without building the event.
func (b Batch) Series(i int) string { return b.dict[b.series[i]] }

// SeriesIndex returns the index of event i's series among the batch's
// distinct series, numbered from 0 in the order each first appears
// (SeriesCount of them), for a caller that groups the events by series
// without hashing their names.
func (b Batch) SeriesIndex(i int) int { return int(b.series[i]) }

// SeriesCount returns the number of distinct series of the events.
func (b Batch) SeriesCount() int { return len(b.dict) }

// FieldsBytes returns the bytes the fields of event i take in the
// batch, a measure of how much building its Fields allocates (Event).
func (b Batch) FieldsBytes(i int) int { return len(b.encodedFields(i)) }

// encodedFields returns the encoding of event i's fields.
func (b Batch) encodedFields(i int) string {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	k := 0
	if len(b.bases) > 1 {
		k = sort.Search(len(b.bases), func(k int) bool { return b.bases[k] > start }) - 1
	}
	return b.chunks[k][start-b.bases[k] : b.ends[i]-b.bases[k]]
}

// fieldsChunk is the size of the strings a Batch holds its events'
// fields in: what a decoder's buffer grows to before it starts another,
// so that a large body's fields are not copied again and again as they
// grow, nor held in a buffer of twice their size.
const fieldsChunk = 1 << 20

// ClientID returns the client id of event i, "" when it has none,
// without building the event: the id its request gave it, not one
// AssignID makes.
func (b Batch) ClientID(i int) string { return b.id(i) }

// id returns the id event i has, "" when none yet.
func (b Batch) id(i int) string {
	if b.ids == nil {
		return ""
	}
	return b.ids[i]
}

// Event returns the i-th event, its Fields built anew from the batch's
// columns: the caller may keep and change it. Its strings share the
// batch's memory.
func (b Batch) Event(i int) Event {
	return Event{Time: b.Time(i), Series: b.Series(i), ID: b.id(i), Fields: decodeFields(b.encodedFields(i))}
}

// Fields returns the fields of event i, built anew as Event builds
// them, without the rest of the event.
func (b Batch) Fields(i int) map[string]any { return decodeFields(b.encodedFields(i)) }

// Field is a field of an event: its name and value, as an Event's
// Fields map holds them.
type Field struct {
	Name  string
	Value any
}

// AppendFields appends the fields of event i to dst, in bytewise order
// of their names, built anew as Fields builds them but without a map:
// for a caller that reads each event's fields once (the chunk layout's
// writer).
func (b Batch) AppendFields(dst []Field, i int) []Field {
	s := b.encodedFields(i)
	if len(s) < 2 || s[1] == 0 {
		return dst
	}
	n, k := uvarint(s, 1) // after tagMap
	pos := 1 + k
	for range n {
		name, end := decodeString(s, pos)
		var v any
		v, pos = decodeValue(s, end)
		dst = append(dst, Field{Name: name, Value: v})
	}
	return dst
}

// Events returns the events, built anew (Event), to edit and Check again.
func (b Batch) Events() []Event {
	if b.Len() == 0 {
		return nil
	}
	out := make([]Event, b.Len())
	for i := range out {
		out[i] = b.Event(i)
	}
	return out
}

// Bytes returns the memory the batch holds: its columns, at their
// capacity, the strings of its dictionary and ids, and the memory of
// its fields.
func (b Batch) Bytes() int64 {
	n := int64(cap(b.times))*8 + int64(cap(b.series))*4 + int64(cap(b.ends))*int64(unsafe.Sizeof(0)) +
		int64(cap(b.dict)+cap(b.ids))*int64(unsafe.Sizeof("")) + int64(b.fieldsCap)
	for _, s := range b.dict {
		n += int64(len(s))
	}
	for _, s := range b.ids {
		n += int64(len(s))
	}
	return n
}

// columnBytes is what an event takes in a Batch's columns of times,
// series and ends.
const columnBytes = 8 + 4 + int64(unsafe.Sizeof(0))

// BareBatchBytes returns Bytes of a Batch of events events without
// series, id or fields, its columns no larger than they need be.
func BareBatchBytes(events int) int64 {
	if events == 0 {
		return 0
	}
	return int64(events)*(columnBytes+2) + int64(unsafe.Sizeof(""))
}

// DecodedBytesBound returns at least Bytes of the Batch that a JSON or
// NDJSON body of size bytes, holding at most events events, decodes to,
// for a caller that holds memory for it before decoding: twice each
// event's columns and id's string header (a column grows by doubling),
// and DecodedTextBound for its fields, series and ids, which the
// decoders hold their text to. The memory a small body's fields are in
// may be up to twice their text, as it grows while they are read
// (batchWriter.batch trims it to no more than that); package admission's
// estimate of the write (BodyBytes), many times the events' own, covers
// it, which its TestBodyBytesIsAnUpperBound checks.
func DecodedBytesBound(size int64, events int) int64 {
	return int64(events)*2*(columnBytes+int64(unsafe.Sizeof(""))+2) + DecodedTextBound(int(size))
}

// DecodedSlack is what DecodedTextBound allows a body beyond twice its
// size: room for about sixty numbers of the longest canonical form in a
// small body, whatever its other text.
const DecodedSlack = 8 << 10

// DecodedTextBound returns the most bytes of fields (as a Batch holds
// them), series and ids the decoders let a body of size bytes decode
// to: twice the body and DecodedSlack more. Encoded fields take at most
// one and a half times their text but for numbers: a number of one
// digit and its comma, the least text a value has, take three bytes; an
// event without fields, two. A number is stored in plain decimal
// notation (storage.CanonicalNumber), which an exponent makes up to 26
// times as long as its text (1e125, 1e-130), so a decoder stops with a
// *DecodedTooLargeError as soon as what it built passes the bound, rather
// than build a batch that the estimate made before decoding (package
// admission) does not cover.
func DecodedTextBound(size int) int64 {
	return 2*int64(size) + DecodedSlack
}

// AssignID returns the id of event i under scheme s: its client id, or
// else its idempotent id (see Event.AssignID), computed from the batch's
// columns, for a caller that learns each event's scheme from the table
// it goes to. The batch does not keep it.
func (b Batch) AssignID(i int, tenant, table string, s IDScheme) string {
	if id := b.id(i); id != "" {
		return id
	}
	return hashID(tenant, table, b.Series(i), b.times[i], b.encodedFields(i), s)
}

// hashID returns the id of an event under scheme s, from the encoding
// of its fields (appendHashFields).
func hashID(tenant, table, series string, nanos int64, fields string, s IDScheme) string {
	domain := idDomain1
	if s == IDScheme2 {
		domain = idDomain2
	}
	bp := hashBufs.Get().(*[]byte)
	b := append((*bp)[:0], domain...)
	b = appendLenString(b, tenant)
	b = appendLenString(b, table)
	b = appendLenString(b, series)
	sec, nsec := nanos/1e9, nanos%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	b = binary.BigEndian.AppendUint64(b, uint64(sec))
	b = binary.BigEndian.AppendUint32(b, uint32(nsec))
	b = append(b, fields...)
	var id string
	if s == IDScheme2 {
		var sum [8]byte
		binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(b))
		id = base64.RawURLEncoding.EncodeToString(sum[:])
	} else {
		sum := sha256.Sum256(b)
		id = base64.RawURLEncoding.EncodeToString(sum[:idBytes1])
	}
	if cap(b) <= maxPooledHashBuf {
		*bp = b
		hashBufs.Put(bp)
	}
	return id
}

// Check validates events against lim at time now (Validate, normalizing
// each in place) and refuses a client id used twice, as the
// decoders do. When any event is bad it returns a *BatchError naming each
// bad one by its index and no Batch. The Batch holds the events in its
// own columns, not events: ids it assigns are not set in events.
// Invalid limits give an error wrapping ErrInvalidLimits.
func Check(events []Event, lim Limits, now time.Time) (Batch, error) {
	if err := lim.Validate(); err != nil {
		return Batch{}, err
	}
	lim = lim.WithDefaults()
	var problems []Problem
	var ids idIndex
	for i := range events {
		reason := validate(&events[i], &lim, now)
		if reason == "" {
			reason = ids.repeat(events[i].ID, i)
		}
		if reason != "" {
			problems = append(problems, Problem{Index: i, Reason: reason})
		}
	}
	if problems != nil {
		return Batch{}, &BatchError{Problems: problems}
	}
	var w batchWriter
	w.grow(len(events), 0)
	for i := range events {
		e := &events[i]
		w.fields = appendHashMap(w.fields, e.Fields, true)
		w.add(e.Time.UnixNano(), e.Series, e.ID)
	}
	return w.batch(), nil
}

// Join returns the events of several batches as one, in order, for a
// writer that stores separate requests together (the MQTT subscriber
// writes the messages that arrived meanwhile in one call). Each batch was
// checked on its own, and so was its rule that a client id names one
// event: events of different batches may share an id, as two requests
// may, and the engine stores an event repeated within one write once.
func Join(batches ...Batch) Batch {
	if len(batches) == 1 {
		return batches[0]
	}
	n, size := 0, 0
	for _, b := range batches {
		n += b.Len()
		if b.Len() > 0 {
			size += b.ends[b.Len()-1]
		}
	}
	var w batchWriter
	w.grow(n, size)
	for _, b := range batches {
		for i := range b.Len() {
			w.fields = append(w.fields, b.encodedFields(i)...)
			w.add(b.times[i], b.Series(i), b.id(i))
		}
	}
	return w.batch()
}

// batchWriter builds a Batch's columns, the fields of each event being
// appended to fields, the chunk being filled, before add.
type batchWriter struct {
	times  []int64
	series []uint32
	dict   []string
	index  map[string]uint32
	last   string // the series of the event before, and its index
	lastIx uint32
	ends   []int
	fields []byte
	// chunks and bases are the chunks filled, and base where fields
	// starts; fieldsCap is the memory of the chunks filled.
	chunks    []string
	bases     []int
	base      int
	fieldsCap int
	ids       []string
	// text is the bytes of the series of dict and of ids; limit, when
	// not 0, is what fields, series and ids may take (over).
	text  int
	limit int64
}

// over reports whether the fields, series and ids written pass w.limit.
func (w *batchWriter) over() bool {
	return w.limit > 0 && int64(w.base+len(w.fields)+w.text) > w.limit
}

// grow makes room for n events whose fields take about size bytes.
func (w *batchWriter) grow(n, size int) {
	w.times = make([]int64, 0, n)
	w.series = make([]uint32, 0, n)
	w.ends = make([]int, 0, n)
	w.fields = make([]byte, 0, min(max(size, 64), fieldsChunk))
}

// seriesIndex returns the index of series in the dictionary, adding it.
func (w *batchWriter) seriesIndex(series string) uint32 {
	if len(w.dict) > 0 && series == w.last {
		return w.lastIx
	}
	ix, ok := w.index[series]
	if !ok {
		if w.index == nil {
			w.index = map[string]uint32{}
		}
		ix = uint32(len(w.dict))
		w.dict = append(w.dict, series)
		w.index[series] = ix
		w.text += len(series)
	}
	w.last, w.lastIx = series, ix
	return ix
}

// add adds an event whose fields end at the end of w.fields.
func (w *batchWriter) add(nanos int64, series, id string) {
	w.times = append(w.times, nanos)
	w.series = append(w.series, w.seriesIndex(series))
	w.ends = append(w.ends, w.base+len(w.fields))
	if id != "" && w.ids == nil {
		w.ids = make([]string, len(w.times)-1, cap(w.times))
	}
	if w.ids != nil {
		w.ids = append(w.ids, id)
		w.text += len(id)
	}
	if len(w.fields) >= fieldsChunk {
		w.seal()
		w.fields = make([]byte, 0, fieldsChunk)
	}
}

// seal adds the chunk filled to the chunks. The chunk becomes a string
// without a copy: fields must not be changed again.
func (w *batchWriter) seal() {
	if len(w.fields) == 0 {
		return
	}
	w.chunks = append(w.chunks, unsafe.String(unsafe.SliceData(w.fields), len(w.fields)))
	w.bases = append(w.bases, w.base)
	w.base += len(w.fields)
	w.fieldsCap += cap(w.fields)
	w.fields = nil
}

// batch returns the Batch built. The writer must not be used again.
// The last chunk of fields is copied to its size when it fills less than
// half of its memory (a body of small events fills a tenth of its first
// chunk, sized for large ones), so that the batch holds little more than
// its events.
func (w *batchWriter) batch() Batch {
	if len(w.times) == 0 {
		return Batch{}
	}
	if len(w.fields) < cap(w.fields)/2 {
		w.fields = bytes.Clone(w.fields)
	}
	w.seal()
	return Batch{times: w.times, series: w.series, dict: w.dict, ends: w.ends, chunks: w.chunks, bases: w.bases, fieldsCap: w.fieldsCap, ids: w.ids}
}

// decodeFields builds an event's Fields from their encoding: nil for an
// empty map.
func decodeFields(s string) map[string]any {
	if len(s) < 2 || s[1] == 0 {
		return nil
	}
	v, _ := decodeValue(s, 0)
	return v.(map[string]any)
}

// decodeValue decodes the value encoded at s[pos:] (appendHashValue), and
// returns where it ends. Strings and numbers are substrings of s.
func decodeValue(s string, pos int) (any, int) {
	tag := s[pos]
	pos++
	switch tag {
	case tagNull:
		return nil, pos
	case tagFalse:
		return false, pos
	case tagTrue:
		return true, pos
	case tagString, tagNumber, tagBinary:
		t, end := decodeString(s, pos)
		switch tag {
		case tagString:
			return t, end
		case tagNumber:
			return json.Number(t), end
		}
		return []byte(t), end
	case tagList:
		n, k := uvarint(s, pos)
		pos += k
		l := make([]any, n)
		for i := range l {
			l[i], pos = decodeValue(s, pos)
		}
		return l, pos
	default: // tagMap
		n, k := uvarint(s, pos)
		pos += k
		m := make(map[string]any, n)
		for range n {
			key, end := decodeString(s, pos)
			m[key], pos = decodeValue(s, end)
		}
		return m, pos
	}
}

// decodeString decodes a length and the bytes it counts (appendLenString).
func decodeString(s string, pos int) (string, int) {
	n, k := uvarint(s, pos)
	pos += k
	return s[pos : pos+n], pos + n
}

// uvarint decodes the unsigned varint at s[pos:], and returns it and its
// length.
func uvarint(s string, pos int) (int, int) {
	if c := s[pos]; c < 0x80 {
		return int(c), 1
	}
	var x uint64
	var shift uint
	for i := 0; ; i++ {
		c := s[pos+i]
		if c < 0x80 {
			return int(x | uint64(c)<<shift), i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
}

// WithSeries returns the batch with the series of each event i set to
// series(i), checked against lim as a decoder checks a series: when any
// is refused, it returns a *BatchError naming each bad event and no
// Batch. The times, ids and fields are b's, shared.
func (b Batch) WithSeries(lim Limits, series func(i int) string) (Batch, error) {
	if err := lim.Validate(); err != nil {
		return Batch{}, err
	}
	lim = lim.WithDefaults()
	var w batchWriter
	w.series = make([]uint32, 0, b.Len())
	var problems []Problem
	for i := range b.Len() {
		s := series(i)
		if reason := checkText("series", s, lim.MaxSeries); reason != "" {
			problems = append(problems, Problem{Index: i, Reason: reason})
		}
		w.series = append(w.series, w.seriesIndex(s))
	}
	if problems != nil {
		return Batch{}, &BatchError{Problems: problems}
	}
	b.series, b.dict = w.series, w.dict
	return b, nil
}
