package chunk

import (
	"encoding/base64"
	"math"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// This file is a chunk item's keys and attribute names (doc.go,
// "Items"): the short sort keys Pack writes, the long ones written
// before, which are still read, and the attribute of the chunk.

// Attributes of a chunk item besides its keys. Field names cannot start
// with "tt_" (package event), and a chunk item holds no fields: a chunk
// is told by its sort key (IsSortKey), so its attributes' names need
// not be told from fields.
const (
	// AttrData holds the chunk: a byte saying how the block is
	// compressed, then the block (doc.go, "Items"). One letter, as
	// every byte of a name is stored in every item.
	AttrData = "c"
	// AttrDataLong is AttrData's name in the items of long sort keys,
	// written before short ones (doc.go, "Items").
	AttrDataLong = "tt_c"
	// AttrCount is the number of events the chunk holds, in the items
	// of version 1 blocks; it is read by nothing, and version 2 items,
	// whose blocks say it, do not have it.
	AttrCount = "tt_n"
)

// Data returns the stored form of a chunk item's chunk, of either
// attribute name, and false when it has none.
func Data(it storage.Item) ([]byte, bool) {
	d, ok := it.Attrs[AttrData].([]byte)
	if !ok {
		d, ok = it.Attrs[AttrDataLong].([]byte)
	}
	return d, ok
}

// IsDataAttr reports whether name is the attribute of a chunk item that
// holds its chunk, in either form.
func IsDataAttr(name string) bool { return name == AttrData || name == AttrDataLong }

// SortKeySep follows the time in a chunk's sort key. It sorts below
// every character of a time key, so after a time prefix
// (itemenc.AppendTimePrefix) it sorts before the keys of the prefix's
// instant; after a whole time key (a long key) it sorts after the map
// layout's "!" and before the row layout's "#" and itemenc.HighKey's
// "$". Either way a chunk's key sorts with the items of its window, and
// a key range of times selects it.
const SortKeySep = '"'

// sumLen is the length of the content sum in a sort key: 8 bytes of
// SHA-256, 11 base64url characters. It tells apart the chunks of one
// series shard whose first events are at one instant, as an 8-byte event
// id tells apart the events of one series at one instant
// (docs/design.md, "Event ids are 8 bytes").
const sumLen = 8

// sumChars is the length of the content sum in base64url.
var sumChars = base64.RawURLEncoding.EncodedLen(sumLen)

// appendSortKey appends the short sort key of a chunk of the window
// starting at start whose first event is at first and whose block has
// the SHA-256 sum sum: the window start's time prefix, SortKeySep, the
// first event's offset from the window start (appendOffset), and the
// sum.
func appendSortKey(dst []byte, start, first time.Time, sum []byte) []byte {
	return appendSortKeyRest(itemenc.AppendTimePrefix(dst, start), start, first, sum)
}

// appendSortKeyRest is appendSortKey after the window start's time
// prefix, which dst ends with: for a caller that keeps the prefixes of
// the windows it writes.
func appendSortKeyRest(dst []byte, start, first time.Time, sum []byte) []byte {
	dst = append(dst, SortKeySep)
	dst = appendOffset(dst, uint64(first.Sub(start)))
	return base64.RawURLEncoding.AppendEncode(dst, sum[:sumLen])
}

// longSortKey returns the sort key chunks had before short ones: the
// first event's whole time key, SortKeySep and the sum.
func longSortKey(first time.Time, sum []byte) string {
	b := itemenc.AppendTimeKey(make([]byte, 0, itemenc.TimeKeyLen+1+sumChars), first)
	b = append(b, SortKeySep)
	return string(base64.RawURLEncoding.AppendEncode(b, sum[:sumLen]))
}

// IsSortKey reports whether sk is a chunk's sort key, short or long: a
// time prefix or a whole time key, SortKeySep, and at least a sum's
// length after it. A row's key has no SortKeySep in its time key, a map
// item's neither.
func IsSortKey(sk string) bool {
	i := strings.IndexByte(sk[:min(len(sk), itemenc.TimeKeyLen+1)], SortKeySep)
	return i > 0 && itemenc.IsTimePrefix(sk[:i]) && (i == itemenc.TimeKeyLen || len(sk)-i-1 >= sumChars+1)
}

// FirstTime returns the time of a chunk's first event, from its sort
// key, short or long.
func FirstTime(sk string) (time.Time, bool) {
	if !IsSortKey(sk) {
		return time.Time{}, false
	}
	i := strings.IndexByte(sk, SortKeySep)
	if i == itemenc.TimeKeyLen {
		return itemenc.ParseTimeKey(sk[:i])
	}
	start, ok := itemenc.ParseTimePrefix(sk[:i])
	if !ok {
		return time.Time{}, false
	}
	off, ok := parseOffset(sk[i+1 : len(sk)-sumChars])
	if !ok || off > uint64(math.MaxInt64-start.UnixNano()) {
		return time.Time{}, false
	}
	return start.Add(time.Duration(off)), true
}

// FirstTimes reads the first events' times of chunks' sort keys that
// mostly share their windows with keys read before, as the chunks of one
// partition do, a window's chunks one after another, and as the
// partitions of many series over one range do: it parses a window's time
// prefix once, keeping up to firstTimesPrefixes of them, and of each
// short key then only its offset. A FirstTimes is used by one goroutine;
// its zero value is ready.
type FirstTimes struct {
	prefix []byte // the last time prefix read, as in the key
	start  int64  // its time, Unix nanoseconds
	set    bool
	starts map[string]int64 // the times of the prefixes parsed
	days   itemenc.TimeKeys // parses a day's prefixes reading the day once
}

// firstTimesPrefixes is how many windows' prefixes a FirstTimes keeps:
// a day's hours, or minutes of an hour, many times over.
const firstTimesPrefixes = 4096

// Nanos returns the time of a chunk's first event, from its sort key,
// in Unix nanoseconds: FirstTime's, false for a key FirstTime refuses.
func (c *FirstTimes) Nanos(sk string) (int64, bool) {
	i := strings.IndexByte(sk[:min(len(sk), itemenc.TimeKeyLen+1)], SortKeySep)
	if i <= 0 || i == itemenc.TimeKeyLen || len(sk)-i-1 < sumChars+1 {
		// Not a short key: a long one, read whole, or no chunk's.
		t, ok := FirstTime(sk)
		return t.UnixNano(), ok
	}
	if !c.set || string(c.prefix) != sk[:i] {
		start, ok := c.starts[sk[:i]]
		if !ok {
			if !itemenc.IsTimePrefix(sk[:i]) {
				return 0, false
			}
			if start, ok = c.days.PrefixNanos(sk[:i]); !ok {
				return 0, false
			}
			if len(c.starts) >= firstTimesPrefixes || c.starts == nil {
				c.starts = make(map[string]int64)
			}
			c.starts[strings.Clone(sk[:i])] = start
		}
		c.prefix, c.start, c.set = append(c.prefix[:0], sk[:i]...), start, true
	}
	off, ok := parseOffset(sk[i+1 : len(sk)-sumChars])
	if !ok || off > uint64(math.MaxInt64-c.start) {
		return 0, false
	}
	return c.start + int64(off), true
}

// KeyTime returns the time of an item of events' sort key: a chunk's
// first event's, or the time a row or map item's key starts with.
func KeyTime(sk string) (time.Time, bool) {
	if IsSortKey(sk) {
		return FirstTime(sk)
	}
	if len(sk) < itemenc.TimeKeyLen {
		return time.Time{}, false
	}
	return itemenc.ParseTimeKey(sk[:itemenc.TimeKeyLen])
}

// An offset is written as its decimal digits without trailing zeros, in
// a form whose bytewise order is the offsets' order, so a window's
// chunks sort by their first events' times as long keys did: a letter
// of offsetWidths, the number of digits of the offset in nanoseconds (A
// for none: the offset 0), then each digit as a letter of offsetDigits,
// the last one from its finals. A final digit d sorts between the
// letters of the digits d-1 and d that are not last ("15" before "2",
// "1" before "1007" before "101"), so a shorter run sorts before the
// longer runs that continue it with more than zeros.
const (
	offsetWidths = "ABCDEFGHIJKLMNOPQRSTU" // 0 to 20 digits
	// offsetDigits holds, for digit d, its letter when it is not last
	// at 2d and its letter when it is last at 2d-1: a (0), b (1, last),
	// c (1), d (2, last), …, r (9, last), s (9).
	offsetDigits = "abcdefghijklmnopqrs"
)

// appendOffset appends an offset of ns nanoseconds: 37 s is "Lgn" (11
// digits, 3 and a last 7), 100.7 s "Mcaan".
func appendOffset(dst []byte, ns uint64) []byte {
	if ns == 0 {
		return append(dst, offsetWidths[0])
	}
	var digits [20]byte
	i := len(digits)
	for v := ns; v > 0; v /= 10 {
		i--
		digits[i] = byte(v % 10)
	}
	dst = append(dst, offsetWidths[len(digits)-i])
	last := len(digits) - 1
	for last > i && digits[last] == 0 {
		last--
	}
	for j := i; j < last; j++ {
		dst = append(dst, offsetDigits[2*digits[j]])
	}
	return append(dst, offsetDigits[2*digits[last]-1])
}

// letterAt returns the index of c in letters, a run of consecutive
// letters (offsetWidths, offsetDigits), or -1: strings.IndexByte of such
// a run, as arithmetic.
func letterAt(letters string, c byte) int {
	if c < letters[0] || c > letters[len(letters)-1] {
		return -1
	}
	return int(c - letters[0])
}

// parseOffset reads what appendOffset writes, and refuses anything else.
func parseOffset(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	width := letterAt(offsetWidths, s[0])
	digits := s[1:]
	if width < 0 || width == 0 != (digits == "") || len(digits) > width {
		return 0, false
	}
	var v uint64
	for j := 0; j < len(digits); j++ {
		k := letterAt(offsetDigits, digits[j])
		last := k%2 == 1
		if k < 0 || last != (j == len(digits)-1) || j == 0 && k == 0 {
			return 0, false // not a digit, a last one inside, or a leading zero
		}
		d := uint64((k + 1) / 2)
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	for range width - len(digits) {
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
	}
	return v, true
}
