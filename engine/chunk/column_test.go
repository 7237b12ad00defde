package chunk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func nums(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = json.Number(s)
	}
	return out
}

// TestColumnsReadBackExactly: each column kind reads back the values it
// was given, type and text, and the writer takes the kind that holds
// them in the fewest bytes.
func TestColumnsReadBackExactly(t *testing.T) {
	for _, c := range []struct {
		name string
		vals []any
		kind byte
	}{
		{"one int", nums("7"), kindInt},
		{"a constant", nums("42", "42", "42", "42"), kindInt},
		{"a counter", nums("100", "110", "120", "130", "140"), kindInt},
		{"int extremes", nums("-9223372036854775808", "9223372036854775807", "0", "-1"), kindInt},
		{"decimals", nums("21.5", "21.55", "-0.05", "0", "-3"), kindDecimal},
		{"decimal of 18 places", nums("0.000000000000000001", "9.223372036854775807"), kindDecimal},
		{"past an int64: floats", nums("0.1", "1000000000000000000000", "0.25"), kindFloat},
		{"more places than 18", nums("0.0000000000000000001", "1"), kindFloat},
		{"neither: generic", nums("1.00000000000000000000000000000000001", "2"), kindAny},
		{"bools", []any{true, false, true}, kindBool},
		{"distinct strings", []any{"a", "b", "", "é😀"}, kindString},
		{"repeated strings", []any{"ok", "ok", "warn", "ok", "ok", "x", "ok"}, kindString},
		{"one string many times", []any{"ok", "ok", "ok"}, kindString},
		{"mixed", []any{"1", json.Number("1"), nil, []byte{0}, []any{}, map[string]any{}}, kindAny},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, kind, err := appendColumn(nil, c.vals)
			require.NoError(t, err)
			require.Equal(t, c.kind, kind)
			got, err := readColumn(kind, b, len(c.vals))
			require.NoError(t, err)
			require.Equal(t, c.vals, got)
			for cut := range len(b) { // truncated, it is refused
				_, err := readColumn(kind, b[:cut], len(c.vals))
				require.ErrorIs(t, err, ErrCorrupt, "cut at %d", cut)
			}
		})
	}
}

// TestDecimalsBeatFloats: readings with a few decimal places take a few
// bits each as decimals, where Gorilla's XOR of their floats takes most
// of their 64.
func TestDecimalsBeatFloats(t *testing.T) {
	vals := nums("21.5", "21.6", "21.6", "21.7", "21.5", "21.4", "21.6", "21.8")
	b, kind, err := appendColumn(nil, vals)
	require.NoError(t, err)
	require.Equal(t, byte(kindDecimal), kind)
	require.LessOrEqual(t, len(b), 7, "%x", b)
	require.Less(t, len(b), len(appendXOR(nil, []uint64{1, 2, 3, 4, 5, 6, 7, 8})))

	same := make([]any, 100)
	for i := range same {
		same[i] = strings.Repeat("x", 70)
	}
	b, _, err = appendColumn(nil, same)
	require.NoError(t, err)
	require.Len(t, b, 1+1+70, "one distinct string and no indexes")
}
