package engine

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
