package event

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// expandingBody returns a body of about size bytes whose every event
// holds an array of numbers that take 25 times their text decoded
// (1e125 is 126 digits): NDJSON, or a JSON array when array is set.
func expandingBody(size int, array bool) []byte {
	line := `{"time":` + okTime + `,"fields":{"v":[` + strings.Repeat("1e125,", 150) + `1e125]}}`
	var b strings.Builder
	sep := "\n"
	if array {
		b.WriteByte('[')
		sep = ","
	}
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(line)
	}
	if array {
		b.WriteByte(']')
	}
	return []byte(b.String())
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestNumbersThatExpandPastTheBoundAreRefusedEarly(t *testing.T) {
	for _, array := range []bool{false, true} {
		decode := DecodeNDJSON
		if array {
			decode = DecodeJSON
		}
		var ratios []float64
		for _, size := range []int{256 << 10, 1 << 20} {
			body := expandingBody(size, array)
			var err error
			n := allocated(func() { _, err = decode(body, Limits{}, testNow) })
			require.ErrorIs(t, err, ErrDecodedTooLarge)
			var tl *DecodedTooLargeError
			require.ErrorAs(t, err, &tl)
			require.Equal(t, len(body), tl.Size)
			require.Equal(t, DecodedTextBound(len(body)), tl.Limit)
			require.Contains(t, err.Error(), "1e125")
			// Decoded whole, the batch would take 25 times the body,
			// and its growth twice that allocated; stopped at the
			// bound, twice the body, the decoder allocates a few times
			// it (the fields grow by doubling, each size allocated
			// anew).
			ratio := float64(n) / float64(len(body))
			t.Logf("array=%v body %d bytes: %d bytes allocated, %.1f times the body", array, len(body), n, ratio)
			require.Less(t, ratio, 12.0)
			ratios = append(ratios, ratio)
		}
		// It grows with the body: four times the body takes at most
		// about four times the memory, not more.
		require.LessOrEqual(t, ratios[1], ratios[0]+1)
	}
}

func TestOrdinaryNumbersWithExponentsReadBackExactly(t *testing.T) {
	body := `{"time":` + okTime + `,"fields":{"a":1e20,"b":1.5e-7,"c":-2.5E+3,"d":12345678901234567890123,"e":[1e125,1e-130,9.9999999999999999999999999999999999999e125]}}`
	want := map[string]any{
		"a": json.Number("100000000000000000000"),
		"b": json.Number("0.00000015"),
		"c": json.Number("-2500"),
		"d": json.Number("12345678901234567890123"),
		"e": []any{
			json.Number("1" + strings.Repeat("0", 125)),
			json.Number("0." + strings.Repeat("0", 129) + "1"),
			json.Number(strings.Repeat("9", 38) + strings.Repeat("0", 126-38)),
		},
	}
	for name, decode := range map[string]func([]byte, Limits, time.Time) (Batch, error){
		"ndjson": DecodeNDJSON,
		"json": func(b []byte, l Limits, now time.Time) (Batch, error) {
			return DecodeJSON(append(append([]byte("["), b...), ']'), l, now)
		},
	} {
		b, err := decode([]byte(body), Limits{}, testNow)
		require.NoError(t, err, name)
		require.Equal(t, 1, b.Len(), name)
		require.Equal(t, want, b.Event(0).Fields, name)
		require.LessOrEqual(t, fieldsText(b), DecodedTextBound(len(body)), name)
	}
}

func TestABodyJustWithinTheBoundIsAccepted(t *testing.T) {
	// One event of n numbers of the longest form: its fields take
	// about 128 bytes a number, its text 6; DecodedSlack lets in a small
	// body of some sixty of them.
	for n := 1; n < 200; n++ {
		body := []byte(`{"time":` + okTime + `,"fields":{"v":[` + strings.Repeat("1e125,", n-1) + `1e125]}}`)
		b, err := DecodeNDJSON(body, Limits{}, testNow)
		if err != nil {
			require.ErrorIs(t, err, ErrDecodedTooLarge)
			require.Greater(t, n, 50, "a body of %d numbers is refused", n)
			return
		}
		require.LessOrEqual(t, fieldsText(b), DecodedTextBound(len(body)))
	}
	t.Fatal("no body was refused")
}

func TestErrorsOfTheBoundAreNotOtherErrors(t *testing.T) {
	err := error(&DecodedTooLargeError{Size: 1, Limit: DecodedTextBound(1)})
	require.False(t, errors.Is(err, ErrMalformedBody))
	require.False(t, errors.Is(err, ErrInvalidEvent))
}

// fieldsText returns the bytes of b's fields, series and ids, which
// DecodedTextBound bounds.
func fieldsText(b Batch) int64 {
	var n int64
	for i := range b.Len() {
		n += int64(b.FieldsBytes(i) + len(b.id(i)))
	}
	for _, s := range b.dict {
		n += int64(len(s))
	}
	return n
}
