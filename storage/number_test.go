package storage

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonicalNumber(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"0", "0"},
		{"-0", "0"},
		{"0.000", "0"},
		{"-0e5", "0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1.00", "1"},
		{"1e0", "1"},
		{"10e-1", "1"},
		{"0.1e1", "1"},
		{"-1", "-1"},
		{"88.50", "88.5"},
		{"3200", "3200"},
		{"1E3", "1000"},
		{"1.5e+3", "1500"},
		{"123.456", "123.456"},
		{"-0.5", "-0.5"},
		{"0.000001", "0.000001"},
		{"1e-6", "0.000001"},
		{"1e-7", "0.0000001"},
		{"0.00000012", "0.00000012"},
		{"-1.25e-10", "-0.000000000125"},
		{"100000000000000000000", "100000000000000000000"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1000000000000000000000"},
		{"123456789012345678901", "123456789012345678901"},
		{"1234567890123456789012", "1234567890123456789012"},
		{"1.5e2", "150"},
		{"123e-2", "1.23"},
		{"1.23e-1", "0.123"},
		{"5e-1", "0.5"},
		{"12345678901234567890123456789012345678", "12345678901234567890123456789012345678"},
		{"1.2345678901234567890123456789012345678e40", "12345678901234567890123456789012345678000"},
		{"0.12345678901234567890123456789012345678", "0.12345678901234567890123456789012345678"},
		{"1e-130", "0." + strings.Repeat("0", 129) + "1"},
		{"-9.9999999999999999999999999999999999999e125", "-" + strings.Repeat("9", 38) + strings.Repeat("0", 88)},
		{"99999999999999999999999999999999999999e88", strings.Repeat("9", 38) + strings.Repeat("0", 88)},
		{"0.0000000000000000000000000000000000000000001e-87", "0." + strings.Repeat("0", 129) + "1"},
		{"1491825600123", "1491825600123"},
		{"-2.5E-3", "-0.0025"},
		{"0e999999999999", "0"},
		{"123456789012345678901234567890123456780000", "123456789012345678901234567890123456780000"},
		{"000", ""}, // not JSON: leading zeros
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := CanonicalNumber(tt.in)
			if tt.want == "" {
				require.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			require.Equal(t, json.Number(tt.want), got)
			again, err := CanonicalNumber(string(got))
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
}

func TestCanonicalNumberRefused(t *testing.T) {
	tests := []struct {
		in, reason string
	}{
		{"", reasonNotNumber},
		{"-", reasonNotNumber},
		{"+1", reasonNotNumber},
		{"01", reasonNotNumber},
		{".5", reasonNotNumber},
		{"5.", reasonNotNumber},
		{"1e", reasonNotNumber},
		{"1e+", reasonNotNumber},
		{"0x10", reasonNotNumber},
		{"NaN", reasonNotNumber},
		{"Infinity", reasonNotNumber},
		{"1 ", reasonNotNumber},
		{"1_000", reasonNotNumber},
		{".", reasonNotNumber},
		{"e5", reasonNotNumber},
		{"1.2.3", reasonNotNumber},
		{"--1", reasonNotNumber},
		{" 1", reasonNotNumber},
		{"007", reasonNotNumber},
		{"123456789012345678901234567890123456789", reasonTooPrecise},
		{"1.00000000000000000000000000000000000001", reasonTooPrecise},
		{"1.23456789012345678901234567890123456789", reasonTooPrecise},
		{"1e126", reasonNumberTooBig},
		{"-1e126", reasonNumberTooBig},
		{"10e125", reasonNumberTooBig},
		{"1" + strings.Repeat("0", 126), reasonNumberTooBig},
		{"1e-131", reasonNumberTooTiny},
		{"0.1e-130", reasonNumberTooTiny},
		{"0." + strings.Repeat("0", 130) + "1", reasonNumberTooTiny},
		{"-1e999999999999", reasonNumberTooBig},
		{"1e-999999999999", reasonNumberTooTiny},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := CanonicalNumber(tt.in)
			require.ErrorIs(t, err, ErrInvalid)
			require.Equal(t, InvalidError{Reason: tt.reason}, err)
		})
	}
}

// FuzzCanonicalNumber checks that the canonical form is the same number,
// is a fixed point, and keeps DynamoDB's bounds.
func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range []string{"0", "1.50", "-1e-7", "123e20", "-0.0e5", "9.9999999999999999999999999999999999999e125", "1e-130", "0.0001", "1e21", "12.5e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := CanonicalNumber(s)
		if err != nil {
			return
		}
		if got == "0" {
			// Zero may carry any exponent, more than big.Rat reads.
			mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
			require.Empty(t, strings.Trim(mantissa, "-0."), s)
			return
		}
		var in, out big.Rat
		// Every other accepted number is within 1e±131, which big.Rat reads.
		_, ok := in.SetString(s)
		require.True(t, ok, s)
		_, ok = out.SetString(string(got))
		require.True(t, ok, got)
		require.Zero(t, in.Cmp(&out), "%s → %s", s, got)
		again, err := CanonicalNumber(string(got))
		require.NoError(t, err)
		require.Equal(t, got, again)
		require.NotContains(t, got, "e")
		digits := strings.Trim(strings.ReplaceAll(strings.TrimPrefix(string(got), "-"), ".", ""), "0")
		require.LessOrEqual(t, len(digits), MaxNumberDigits)
		// The canonical form read as canonical, and what is read as
		// canonical is its own form.
		d, _ := parseDecimal(string(got))
		require.True(t, d.canonical, got)
		d, _ = parseDecimal(s)
		require.Equal(t, d.canonical, string(got) == s, s)
		// The size is the same read from any spelling of the number.
		require.Equal(t, NumberSize(string(got)), NumberSize(s), s)
	})
}

func TestCanonicalNumberDoesNotAllocate(t *testing.T) {
	for _, s := range []string{"0", "42", "-17", "88.5", "1491825600123", "-0.0025"} {
		n := testing.AllocsPerRun(100, func() {
			if _, err := CanonicalNumber(s); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, n, "%s", s)
	}
}

// TestAppendCanonicalNumberBytes checks that bytes and strings read alike.
func TestAppendCanonicalNumberBytes(t *testing.T) {
	for _, s := range []string{"1.50", "-1e-7", "1e126", "+1"} {
		fromString, errString := AppendCanonicalNumber(nil, s)
		fromBytes, errBytes := AppendCanonicalNumber(nil, []byte(s))
		require.Equal(t, fromString, fromBytes, s)
		require.Equal(t, errString, errBytes, s)
	}
}

func BenchmarkAppendCanonicalNumber(b *testing.B) {
	for _, s := range []string{"3200", "88.5", "48.856613", "1.50e3", "12345678901234567890123456789012345678"} {
		b.Run(s, func(b *testing.B) {
			var buf [48]byte
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AppendCanonicalNumber(buf[:0], s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
