package engine

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/filter"
)

func TestCursorRoundTripAndTampering(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	q := Query{Table: "a", From: time.Unix(0, 0), To: time.Unix(100, 0)}
	fp := fingerprint("acme", q)
	pos := position{time: time.Unix(5, 123456789).UTC(), id: "id-1", series: "car#17"}
	c := encodeCursor(secret, fp, pos)

	got, err := decodeCursor(secret, fp, c)
	require.NoError(t, err)
	require.Equal(t, pos, got)

	raw, _ := base64.RawURLEncoding.DecodeString(c)
	for i := range raw {
		bad := append([]byte(nil), raw...)
		bad[i] ^= 0x01
		_, err := decodeCursor(secret, fp, base64.RawURLEncoding.EncodeToString(bad))
		require.ErrorIs(t, err, ErrBadCursor, "byte %d flipped", i)
	}
	for _, s := range []string{"", "!!!", "AAAA", c[:len(c)-2]} {
		_, err := decodeCursor(secret, fp, s)
		require.ErrorIs(t, err, ErrBadCursor)
	}
	// Another query, another tenant, or another store's key: refused.
	q2 := q
	q2.Desc = true
	_, err = decodeCursor(secret, fingerprint("acme", q2), c)
	require.ErrorContains(t, err, "another query")
	_, err = decodeCursor(secret, fingerprint("other", q), c)
	require.ErrorIs(t, err, ErrBadCursor)
	_, err = decodeCursor([]byte("another key of thirty-two bytes!"), fp, c)
	require.ErrorIs(t, err, ErrBadCursor)
	// The limit may change between pages.
	q3 := q
	q3.Limit = 7
	_, err = decodeCursor(secret, fingerprint("acme", q3), c)
	require.NoError(t, err)
}

// TestFingerprintOfCursorsIssuedBefore holds fingerprint to the bytes
// cursors were signed with when it was written with fmt, so that a
// cursor issued by an earlier version still resumes its query.
func TestFingerprintOfCursorsIssuedBefore(t *testing.T) {
	old := func(tenant string, q Query) [8]byte {
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
	f, err := filter.Parse(`speed > 10 and gear = "D"`)
	require.NoError(t, err)
	long := strings.Repeat("x", 300)
	for _, q := range []Query{
		{Table: "a", From: time.Unix(0, 0), To: time.Unix(100, 0)},
		{Table: "cars", Series: "car-17", From: time.Unix(-5, 3), To: time.Unix(1e9, 7), Desc: true, Fields: []string{"speed", "gear"}},
		{Table: long, Series: long, Fields: []string{long}, Filter: f},
	} {
		require.Equal(t, old("acme", q), fingerprint("acme", q), q.Table)
	}
}
