package pebblestore

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonicalNumber(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"0", "0", nil},
		{"-0", "0", nil},
		{"+0", "0", nil},
		{"0.000", "0", nil},
		{"-0.0e5", "0", nil},
		{"000", "0", nil},
		{"0e999999999999", "0", nil},
		{"1", "1", nil},
		{"+1", "1", nil},
		{"-1", "-1", nil},
		{"007", "7", nil},
		{"1.50", "1.5", nil},
		{"1.0", "1", nil},
		{"10", "10", nil},
		{"1000", "1000", nil},
		{"1e3", "1000", nil},
		{"1E+3", "1000", nil},
		{"15e-1", "1.5", nil},
		{"-2.5E-3", "-0.0025", nil},
		{".5", "0.5", nil},
		{"5.", "5", nil},
		{"0.05", "0.05", nil},
		{"123.456", "123.456", nil},
		{"-0.5", "-0.5", nil},
		{"1491825600123", "1491825600123", nil},
		{"12345678901234567890123456789012345678", "12345678901234567890123456789012345678", nil},
		{"123456789012345678901234567890123456780000", "123456789012345678901234567890123456780000", nil},
		{"1E-130", "0." + strings.Repeat("0", 129) + "1", nil},
		{"9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999" + strings.Repeat("0", 88), nil},
		{"123456789012345678901234567890123456789", "", errTooPrecise},
		{"1.23456789012345678901234567890123456789", "", errTooPrecise},
		{"1e126", "", errNumberTooBig},
		{"-1e126", "", errNumberTooBig},
		{"1" + strings.Repeat("0", 126), "", errNumberTooBig},
		{"1e-131", "", errNumberTooTiny},
		{"0." + strings.Repeat("0", 130) + "1", "", errNumberTooTiny},
		{"1e999999999999", "", errNumberTooBig},
		{"", "", errNotNumber},
		{"-", "", errNotNumber},
		{".", "", errNotNumber},
		{"e5", "", errNotNumber},
		{"1e", "", errNotNumber},
		{"1e+", "", errNotNumber},
		{"1.2.3", "", errNotNumber},
		{"--1", "", errNotNumber},
		{" 1", "", errNotNumber},
		{"1 ", "", errNotNumber},
		{"0x10", "", errNotNumber},
		{"NaN", "", errNotNumber},
		{"Infinity", "", errNotNumber},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := canonicalNumber(tc.in)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCanonicalNumberDoesNotAllocate(t *testing.T) {
	for _, s := range []string{"0", "42", "-17", "88.5", "1491825600123", "-0.0025"} {
		n := testing.AllocsPerRun(100, func() {
			if _, err := canonicalNumber(s); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, n, "%s", s)
	}
}

// FuzzCanonicalNumber checks that a canonical number has the value of its
// input, is its own canonical form, and is what isCanonical accepts.
func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.50", "1e3", "-2.5E-3", ".5", "5.", "007", "1E-130", "1e126", "12345678901234567890123456789012345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := canonicalNumber(s)
		if err != nil {
			return
		}
		in, ok := new(big.Rat).SetString(s)
		require.True(t, ok, "%q was accepted but big.Rat refuses it", s)
		out, ok := new(big.Rat).SetString(got)
		require.True(t, ok, "%q -> %q", s, got)
		require.Zero(t, in.Cmp(out), "%q -> %q changes the value", s, got)
		again, err := canonicalNumber(got)
		require.NoError(t, err)
		require.Equal(t, got, again, "canonical form is stable")
		ok, err = isCanonical(got)
		require.NoError(t, err)
		require.True(t, ok, "%q is recognised as canonical", got)
	})
}
