package event

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// IDScheme is how an event's id is made from its content: a fact of the
// physical table the event is stored in, recorded in the table's
// registry entry when the table is made, and never changed afterwards,
// so that a retried write of an event computes the id it was stored
// under. The package documentation says why each scheme is what it is.
type IDScheme int

// The id schemes.
const (
	// IDScheme1 keeps 128 bits of SHA-256 of the encoding, in 22
	// base64url characters: the ids of every table made before schemes
	// were recorded, and of every table whose registry entry names none.
	IDScheme1 IDScheme = 1
	// IDScheme2 keeps the 64 bits of XXH64 of the encoding, in 11
	// base64url characters: the ids of tables made from then on.
	IDScheme2 IDScheme = 2
	// LatestIDScheme is the scheme of tables made now.
	LatestIDScheme = IDScheme2
)

// MaxAssignedIDLen is the length of the longest id any scheme assigns
// (IDScheme1's): a caller that sizes an item before it knows the
// table's scheme sizes it with an id this long.
const MaxAssignedIDLen = 22

// Valid reports whether s is a scheme this package knows.
func (s IDScheme) Valid() bool { return s == IDScheme1 || s == IDScheme2 }

// IDLen returns the length of the ids s assigns.
func (s IDScheme) IDLen() int {
	if s == IDScheme2 {
		return 11
	}
	return MaxAssignedIDLen
}

// The domain strings that start the encodings hashed into ids, one per
// scheme, so that a change of the encoding can never give an old id to a
// different event and no scheme's hash is ever taken over another's
// encoding.
const (
	idDomain1 = "timetable event id v1\x00"
	idDomain2 = "timetable event id v2\x00"
)

// idBytes1 is how much of the SHA-256 sum a scheme-1 id keeps: 128 bits.
const idBytes1 = 16

// The encoding hashed into an id is, in order:
//
//	the scheme's domain string ("timetable event id v1" or
//	"timetable event id v2") 0x00
//	str(tenant) str(table) str(series)
//	Unix seconds of the time, 8 bytes big-endian two's complement
//	nanoseconds within the second, 4 bytes big-endian
//	value(fields as a map; a nil map is the empty map)
//
// where str(s) is uvarint(len(s)) then the bytes of s, and value(v) is a
// one-byte type tag then: nothing for 'z' (null), 'f' (false) and 't'
// (true); str(v) for 's' (string), 'n' (number, in canonical form) and 'b'
// (binary); uvarint(len) then each value for 'l' (list); uvarint(len) then
// str(key) value(v) for each entry in bytewise key order for 'm' (map).
// Every part has its length or type before it, so no two different events
// encode alike. Changing this encoding changes every id: it must not
// change within a scheme. Scheme 1 hashes it with SHA-256 and keeps the
// first 16 bytes of the sum; scheme 2 hashes it with XXH64 (seed 0) and
// keeps the 8 bytes of the sum, big-endian. Both are unpadded base64url.

// Type tags of values in the encoding hashed into an id.
const (
	tagNull   = 'z'
	tagFalse  = 'f'
	tagTrue   = 't'
	tagString = 's'
	tagNumber = 'n'
	tagBinary = 'b'
	tagList   = 'l'
	tagMap    = 'm'
	tagOther  = 'x'
)

// AssignID sets the event's idempotent id under scheme s when it has no
// id: a hash of the tenant, the logical table, the series, the time to
// the nanosecond and the fields, as the package documentation describes.
// An event with an id keeps it. Call it on an event that passed Validate
// or a decoder, whose numbers are canonical; it canonicalizes json.Number
// values again for the hash anyway, so a number's spelling never changes
// an id. A scheme that is not Valid is taken as IDScheme1.
func (e *Event) AssignID(tenant, table string, s IDScheme) {
	if e.ID != "" {
		return
	}
	bp := hashBufs.Get().(*[]byte)
	fields := appendHashMap((*bp)[:0], e.Fields, false)
	e.ID = hashID(tenant, table, e.Series, e.Time.UnixNano(), string(fields), s)
	if cap(fields) <= maxPooledHashBuf {
		*bp = fields
		hashBufs.Put(bp)
	}
}

// hashBufs holds the buffers AssignID encodes events into; buffers that
// grew past maxPooledHashBuf for a large event are left to the GC.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledHashBuf = 64 << 10

func appendLenString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendHashValue(b []byte, v any, canonical bool) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, tagNull)
	case bool:
		if v {
			return append(b, tagTrue)
		}
		return append(b, tagFalse)
	case string:
		return appendLenString(append(b, tagString), v)
	case json.Number:
		if canonical {
			return appendLenString(append(b, tagNumber), string(v))
		}
		var buf [48]byte
		c, reason := appendNumber(buf[:0], v)
		if reason != "" {
			c = append(buf[:0], v...)
		}
		b = binary.AppendUvarint(append(b, tagNumber), uint64(len(c)))
		return append(b, c...)
	case []byte:
		b = binary.AppendUvarint(append(b, tagBinary), uint64(len(v)))
		return append(b, v...)
	case []any:
		b = binary.AppendUvarint(append(b, tagList), uint64(len(v)))
		for _, e := range v {
			b = appendHashValue(b, e, canonical)
		}
		return b
	case map[string]any:
		return appendHashMap(b, v, canonical)
	default:
		// Not a storage type: Validate was not called. Hash its type and
		// value so that at least equal values give equal ids.
		return appendLenString(append(b, tagOther), fmt.Sprintf("%T:%v", v, v))
	}
}

// smallMap is the size of map whose keys are sorted without allocating.
const smallMap = 16

func appendHashMap(b []byte, m map[string]any, canonical bool) []byte {
	b = binary.AppendUvarint(append(b, tagMap), uint64(len(m)))
	var small [smallMap]string
	keys := small[:0]
	if len(m) > smallMap {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = appendLenString(b, k)
		b = appendHashValue(b, m[k], canonical)
	}
	return b
}
