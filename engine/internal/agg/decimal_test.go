package agg

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/stretchr/testify/require"
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

// FuzzAddSmall holds the int64 sum to apd's exact addition: the same
// value, or a refusal that leaves the sum as it was.
func FuzzAddSmall(f *testing.F) {
	f.Add("21.5", "-3.25")
	f.Add("9223372036854775807", "1")
	f.Add("-9223372036854775808", "-1")
	f.Add("0.000000000000000001", "100000000000")
	f.Add("1e3", "0.5")
	f.Add("-0", "0.0")
	f.Add("5E+2", "5E-2")
	f.Fuzz(func(t *testing.T, a, b string) {
		var sum, x, want apd.Decimal
		if _, _, err := sum.SetString(a); err != nil || sum.Form != apd.Finite {
			t.Skip()
		}
		if _, _, err := x.SetString(b); err != nil || x.Form != apd.Finite {
			t.Skip()
		}
		if _, err := exact.Add(&want, &sum, &x); err != nil {
			t.Skip()
		}
		before := sum
		before.Coeff.Set(&sum.Coeff)
		if !addSmall(&sum, &x) {
			if sum.Cmp(&before) != 0 || sum.Exponent != before.Exponent {
				t.Fatalf("%s + %s: refused, yet changed the sum to %s", a, b, &sum)
			}
			return
		}
		if sum.Cmp(&want) != 0 {
			t.Fatalf("%s + %s = %s, apd says %s", a, b, &sum, &want)
		}
		if decimalNumber(&sum) != decimalNumber(&want) {
			t.Fatalf("%s + %s reads %s, apd's %s", a, b, decimalNumber(&sum), decimalNumber(&want))
		}
	})
}

// TestSmallDecimalNumber writes generated decimals (coefficients with
// and without trailing zeros, up to the int64 limit, zero and negative
// zero; exponents on both sides of smallTextDigits) through
// smallDecimalNumber's one allocation and through apd's reduction and
// text: the same text, or smallDecimalNumber declines.
func TestSmallDecimalNumber(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 11))
	declined, written := 0, 0
	for range 20000 {
		var c int64
		switch r.IntN(4) {
		case 0:
			c = r.Int64N(1000) * 1000
		case 1:
			c = math.MaxInt64 - r.Int64N(10)
		case 2:
			c = 0
		default:
			c = r.Int64N(1 << 40)
		}
		var d apd.Decimal
		d.SetFinite(c, int32(r.IntN(100)-50))
		d.Negative = r.IntN(2) == 0 && c != 0
		if c == 0 && r.IntN(2) == 0 {
			d.Negative = true // negative zero
		}
		var red apd.Decimal
		red.Reduce(&d)
		want := json.Number(red.Text('f'))
		if red.IsZero() {
			want = "0"
		}
		got, ok := smallDecimalNumber(&d)
		if !ok {
			declined++
			continue
		}
		written++
		require.Equal(t, want, got, "%s", d.String())
	}
	require.NotZero(t, declined)
	require.NotZero(t, written)
}
