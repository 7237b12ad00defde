package engine

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
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
	h := sha256.New()
	order := "asc"
	if q.Desc {
		order = "desc"
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00%s", tenant, q.Table, q.Series, q.From.UnixNano(), q.To.UnixNano(), order, strings.Join(q.Fields, "\x00"))
	if q.Filter != nil {
		fmt.Fprintf(h, "\x00filter\x00%s", filter.Format(*q.Filter))
	}
	var fp [8]byte
	copy(fp[:], h.Sum(nil))
	return fp
}
