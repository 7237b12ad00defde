package chunk

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// TestPackInOrderAsShuffled: events already in block order (each later
// than the one before, or of its time with a greater client id), which
// Pack takes as they are, give the items the same events give in any
// other order, which Pack sorts; so do events that tie on time and id.
func TestPackInOrderAsShuffled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var inOrder, ties []event.Event
	for i := range 500 {
		ev := event.Event{Time: at(int64(i/3) * int64(time.Second)), Series: testSeries.Series, Fields: map[string]any{"v": num(strconv.Itoa(r.IntN(100))), "s": []string{"ok", "warn"}[r.IntN(2)]}}
		if i%3 != 0 {
			ev.ID = "id" + strconv.Itoa(i%3)
		}
		inOrder = append(inOrder, ev)
		tie := ev
		tie.ID = ""
		ties = append(ties, tie, tie)
	}
	for _, evs := range [][]event.Event{inOrder, ties} {
		items, alone, err := Pack(testSeries, time.Hour, evs)
		require.NoError(t, err)
		require.Empty(t, alone)
		shuffled := slices.Clone(evs)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, _, err := Pack(testSeries, time.Hour, shuffled)
		require.NoError(t, err)
		require.Equal(t, len(items), len(again))
		for i := range items {
			require.Equal(t, items[i].Key(), again[i].Key())
			require.Equal(t, items[i].Attrs, again[i].Attrs)
		}
		requireSameEvents(t, evs, unpackAll(t, testSeries, time.Hour, items, nil))
	}
}

// TestCompressBySize: a block under zstdFrom bytes is stored as S2, a
// larger one as Zstandard, either as it is when the codec does not
// shorten it; each reads back.
func TestCompressBySize(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for _, c := range []struct {
		name  string
		block []byte
		how   byte
	}{
		{"small, repeats", bytes.Repeat([]byte("xyz"), 50), storedS2},
		{"small, noise", noise(100), storedRaw},
		{"just under", bytes.Repeat([]byte("a"), zstdFrom-1), storedS2},
		{"at the bound", bytes.Repeat([]byte("a"), zstdFrom), storedZstdBare},
		{"large, repeats", []byte(strings.Repeat("temp=21.5 ", 1000)), storedZstdBare},
		{"large, noise", noise(5000), storedRaw},
	} {
		t.Run(c.name, func(t *testing.T) {
			stored := compress(c.block)
			require.Equal(t, c.how, stored[0])
			require.LessOrEqual(t, len(stored), 1+len(c.block))
			back, err := decompress(stored)
			require.NoError(t, err)
			require.Equal(t, c.block, back)
		})
	}
}

// TestExactIntAsParseInt: exactInt takes what strconv.ParseInt takes,
// as the same int64.
func TestExactIntAsParseInt(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := []string{"", "-", "+", "0", "-0", "+0", "007", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "1.5", "1e5", "12a", " 1", "1 ", "--1", "+-1", "0x10", "1_0"}
	for range 100000 {
		s := strconv.FormatUint(r.Uint64()>>r.IntN(64), 10)
		switch r.IntN(3) {
		case 0:
			s = "-" + s
		case 1:
			s += string("0123456789.-"[r.IntN(12)])
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want, err := strconv.ParseInt(s, 10, 64)
		got, ok := exactInt(s)
		require.Equal(t, err == nil, ok, "%q", s)
		if ok {
			require.Equal(t, want, got, "%q", s)
		}
	}
}

// TestDecimalFloats: the float a decimal column's number is, worked out
// from its mantissa and scale, is the one ParseFloat reads from its
// text, and exactFloat takes the text, for mantissas under
// maxExactMantissa at every scale.
func TestDecimalFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var buf []byte
	for range 200000 {
		scale := r.IntN(maxScale + 1)
		m := r.Int64N(int64(pow10[1+r.IntN(15)]))
		if r.IntN(2) == 0 {
			m = -m
		}
		buf = appendDecimal(buf[:0], m, scale)
		got, ok := mantissa(string(buf), scale)
		require.True(t, ok, "%s", buf)
		require.Equal(t, m, got)
		f, ok := exactFloat(string(buf))
		require.True(t, ok, "%s", buf)
		require.Equal(t, math.Float64bits(f), math.Float64bits(float64(m)/float64(pow10[scale])), "%s", buf)
	}
	// And a column of them reads back as its text.
	vals := []any{json.Number("0.1"), json.Number("-21.55"), json.Number("1013.25"), json.Number("0")}
	b, kind, err := appendColumn(nil, vals)
	require.NoError(t, err)
	got, err := readColumn(kind, b, len(vals))
	require.NoError(t, err)
	require.Equal(t, vals, got)
}
