package engine

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestPlainDecimalsParseAsApdDoes holds the fast path of parseDecimal to
// apd's own parser: the same coefficient, exponent and sign, and the
// general parser for everything else.
func TestPlainDecimalsParseAsApdDoes(t *testing.T) {
	for _, s := range []string{
		"0", "1", "-1", "21.5", "21.50", "-21.50", "0.0", "0.001", "007", "1013.25",
		"123456789012345678", "-123456789012345678", "0.123456789012345678", "12345678901234567.8",
		"1234567890123456789", "-0", "-0.0", "1.", ".5", "-", "", "1e3", "1.5E-3", "+1", "1.2.3", "1-2",
		"NaN", "Infinity", "12a", "99999999999999999999",
	} {
		checkPlainDecimal(t, s)
	}
	var d apd.Decimal
	for _, s := range []string{"1234567890123456789", "-0", "1e3", "1."} {
		if parsePlainDecimal(&d, s) {
			t.Errorf("%q: the fast path took it; it is apd's to read", s)
		}
	}
}

// FuzzPlainDecimal holds the fast path to apd's parser on any text.
func FuzzPlainDecimal(f *testing.F) {
	for _, s := range []string{"21.5", "-0.001", "123456789012345678", "1e3", "-0"} {
		f.Add(s)
	}
	f.Fuzz(checkPlainDecimal)
}

// checkPlainDecimal checks that the fast path either refuses s, leaving
// its decimal unchanged, or reads it as apd does.
func checkPlainDecimal(t *testing.T, s string) {
	var fast, slow apd.Decimal
	if !parsePlainDecimal(&fast, s) {
		if !fast.IsZero() || fast.Exponent != 0 {
			t.Errorf("%q: refused, yet set the decimal to %s", s, &fast)
		}
		return
	}
	if _, _, err := slow.SetString(s); err != nil {
		t.Errorf("%q: fast path read %s, apd refuses it: %v", s, &fast, err)
		return
	}
	if fast.Form != slow.Form || fast.Negative != slow.Negative || fast.Exponent != slow.Exponent || fast.Coeff.Cmp(&slow.Coeff) != 0 {
		t.Errorf("%q: fast path read %+v, apd %+v", s, fast, slow)
	}
}
