package event

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// With Limits.ReceiveTime an event without time takes now, in the
// decoders and in Check alike; without it, it is refused.
func TestReceiveTime(t *testing.T) {
	body := []byte(`{"series":"s","fields":{"v":1}}`)
	_, err := DecodeNDJSON(body, Limits{}, testNow)
	require.ErrorIs(t, err, ErrInvalidEvent)

	lim := Limits{ReceiveTime: true}
	b, err := DecodeNDJSON(body, lim, testNow)
	require.NoError(t, err)
	require.Equal(t, testNow, b.Event(0).Time)
	b, err = DecodeJSON([]byte(`[`+string(body)+`,{"time":"2017-04-10T12:00:00Z"}]`), lim, testNow)
	require.NoError(t, err)
	require.Equal(t, testNow, b.Event(0).Time)
	require.NotEqual(t, testNow, b.Event(1).Time, "a time sent is kept")

	_, err = Check([]Event{{Series: "s"}}, Limits{}, testNow)
	require.ErrorIs(t, err, ErrInvalidEvent)
	b, err = Check([]Event{{Series: "s"}}, lim, testNow)
	require.NoError(t, err)
	require.Equal(t, testNow, b.Event(0).Time)
}

// Join keeps every event of every batch, in order, and a client id may
// appear in two of them, as in two requests.
func TestJoin(t *testing.T) {
	a, err := DecodeNDJSON([]byte(`{"time":1491825600000,"id":"x"}`+"\n"+`{"time":1491825600001}`), Limits{}, testNow)
	require.NoError(t, err)
	b, err := DecodeNDJSON([]byte(`{"time":1491825600002,"id":"x"}`), Limits{}, testNow)
	require.NoError(t, err)
	j := Join(a, b)
	require.Equal(t, 3, j.Len())
	require.Equal(t, "x", j.Event(0).ID)
	require.Equal(t, b.Event(0), j.Event(2))
	require.Equal(t, 0, Join().Len())
}
