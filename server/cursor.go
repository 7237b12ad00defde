package server

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/engine"
)

// pageCursorVersion starts every page cursor.
const pageCursorVersion = 1

// A page cursor is the engine's cursor with the range of the query it was
// issued for, so that the next page resolves an absent from or to as the
// first page did. It needs no signature of its own: the engine's cursor
// is signed with the query, range included, so a page cursor whose range
// was altered is refused by the engine.
//
//	version (1 byte) | from, Unix ns (8 bytes) | to, Unix ns (8 bytes) | engine cursor

// encodePageCursor returns the page cursor of an engine cursor issued for
// the range [from, to].
func encodePageCursor(from, to time.Time, c string) string {
	b := make([]byte, 0, 17+len(c))
	b = append(b, pageCursorVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(from.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(to.UnixNano()))
	b = append(b, c...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageCursor returns the range and the engine cursor of a page
// cursor.
func decodePageCursor(s string) (from, to time.Time, c string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 18 || b[0] != pageCursorVersion {
		return time.Time{}, time.Time{}, "", fmt.Errorf("%w: cursor: not a next_cursor this API issued", engine.ErrBadCursor)
	}
	from = time.Unix(0, int64(binary.BigEndian.Uint64(b[1:]))).UTC()
	to = time.Unix(0, int64(binary.BigEndian.Uint64(b[9:]))).UTC()
	return from, to, string(b[17:]), nil
}
