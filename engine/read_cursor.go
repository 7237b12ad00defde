package engine

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/filter"
)

// position is where a query stopped: the last event it returned, in the
// merge order (time, id, series).
type position struct {
	time   time.Time
	id     string
	series string
}

const cursorVersion = 1

// encodeCursor returns the cursor of a query stopped at pos. It carries
// the position, a fingerprint of the query so it cannot be used with
// another one, and an HMAC so it cannot be altered.
func encodeCursor(secret []byte, fp [8]byte, pos position) string {
	var b []byte
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(pos.time.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(pos.id)))
	b = append(b, pos.id...)
	b = binary.AppendUvarint(b, uint64(len(pos.series)))
	b = append(b, pos.series...)
	b = append(b, fp[:]...)
	mac := hmac.New(sha256.New, secret)
	mac.Write(b)
	b = mac.Sum(b)[:len(b)+16]
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor checks a cursor and returns its position.
func decodeCursor(secret []byte, fp [8]byte, s string) (position, error) {
	bad := func(why string) (position, error) {
		return position{}, fmt.Errorf("%w: %s", ErrBadCursor, why)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+8+1+1+8+16 {
		return bad("not a cursor timetable issued")
	}
	body, sum := b[:len(b)-16], b[len(b)-16:]
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil)[:16], sum) {
		return bad("altered or not issued by this store")
	}
	if body[0] != cursorVersion {
		return bad("from another version")
	}
	if !bytes.Equal(body[len(body)-8:], fp[:]) {
		return bad("issued for another query: keep table, series, from, to, order and fields the same while paging")
	}
	r := body[1 : len(body)-8]
	nanos := binary.BigEndian.Uint64(r)
	r = r[8:]
	id, r, ok := readString(r)
	if !ok {
		return bad("damaged")
	}
	series, r, ok := readString(r)
	if !ok || len(r) != 0 {
		return bad("damaged")
	}
	return position{time: time.Unix(0, int64(nanos)).UTC(), id: id, series: series}, nil
}

func readString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// fingerprint identifies a query, less its limit and cursor.
func fingerprint(tenant string, q Query) [8]byte {
	order := "asc"
	if q.Desc {
		order = "desc"
	}
	// The bytes of "%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00%s" of tenant,
	// table, series, from, to, order and the fields joined by NULs, then
	// "\x00filter\x00" and the filter: what cursors issued before were
	// signed with, written without fmt.
	var buf [256]byte
	b := append(buf[:0], tenant...)
	b = append(append(b, 0), q.Table...)
	b = append(append(b, 0), q.Series...)
	b = strconv.AppendInt(append(b, 0), q.From.UnixNano(), 10)
	b = strconv.AppendInt(append(b, 0), q.To.UnixNano(), 10)
	b = append(append(b, 0), order...)
	b = append(b, 0)
	for i, f := range q.Fields {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, f...)
	}
	if q.Filter != nil {
		b = append(append(b, "\x00filter\x00"...), filter.Format(*q.Filter)...)
	}
	sum := sha256.Sum256(b)
	var fp [8]byte
	copy(fp[:], sum[:])
	return fp
}
