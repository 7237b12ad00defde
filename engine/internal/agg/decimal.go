package agg

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// AvgDigits is the number of significant digits an average is rounded to:
// DynamoDB's precision, so that an average can be stored as an event's
// number again. Sums, minimums and maximums are exact and not rounded.
const AvgDigits = 38

var (
	// exact adds decimals without ever rounding: apd's precision 0 is
	// unlimited for sums.
	exact = apd.BaseContext
	// averaging divides a sum by a count, rounding half to even to
	// AvgDigits significant digits.
	averaging = func() *apd.Context {
		c := apd.BaseContext.WithPrecision(AvgDigits)
		c.Rounding = apd.RoundHalfEven
		return c
	}()
)

// decimalBound bounds the decimals aggregates read: exponents within
// ±decimalBound, and texts of at most decimalBound characters. DynamoDB's
// numbers lie well inside (exponents from -130 to 125, 38 digits), and so
// do the sums rollups store (a few hundred digits), while apd refuses
// exponents past ±100,000: so no sum of decimals read here can fail.
const decimalBound = 1000

// decimalOf sets d to the field value v, and reports whether v is a number
// (a json.Number, as events and stores hold numbers).
func decimalOf(d *apd.Decimal, v any) bool {
	n, ok := v.(json.Number)
	return ok && parseDecimal(d, string(n))
}

// parseDecimal sets d to the decimal s, in plain or exponent notation, and
// reports whether s is one that aggregates can add: finite, and within
// decimalBound.
func parseDecimal(d *apd.Decimal, s string) bool {
	if parsePlainDecimal(d, s) {
		return true
	}
	if len(s) > decimalBound {
		return false
	}
	if _, _, err := d.SetString(s); err != nil || d.Form != apd.Finite {
		return false
	}
	return -decimalBound <= d.Exponent && d.Exponent <= decimalBound
}

// parsePlainDecimal sets d to s and reports true when s is a short
// decimal in plain notation ([-]digits[.digits], at most 18 digits, not a
// negative zero): the numbers sensors send. It sets d as apd's SetString
// would, coefficient and exponent alike, without its general parser,
// which an aggregate would otherwise pay for every value it reads. On
// false d is unchanged and s is for SetString.
func parsePlainDecimal[T string | []byte](d *apd.Decimal, s T) bool {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		i, neg = 1, true
	}
	if i == len(s) || len(s)-i > 19 {
		return false
	}
	var coeff int64
	digits, point := 0, -1
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			coeff = coeff*10 + int64(c-'0')
			digits++
		case c == '.' && point < 0:
			point = digits
		default:
			return false
		}
	}
	if digits == 0 || digits > 18 || point == digits || (neg && coeff == 0) {
		return false
	}
	exp := int32(0)
	if point >= 0 {
		exp = int32(point - digits)
	}
	if neg {
		coeff = -coeff
	}
	d.SetFinite(coeff, exp)
	return true
}

// addDecimal adds x to sum, exactly.
func addDecimal(sum, x *apd.Decimal) {
	if addSmall(sum, x) {
		return
	}
	if _, err := exact.Add(sum, sum, x); err != nil {
		// Unreachable: parseDecimal keeps exponents and lengths far
		// inside what apd adds.
		panic("engine: exact sum: " + err.Error())
	}
}

// pow10 holds the powers of ten an int64 holds.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// addSmall adds x to sum as apd's exact addition does (to the exponent of
// the finer of the two) when both coefficients, aligned, and their sum
// fit an int64, as the sums of sensors' readings do: apd's general
// addition is most of what summing them costs. It reports false, leaving
// sum unchanged, for apd to add.
func addSmall(sum, x *apd.Decimal) bool {
	if sum.Form != apd.Finite || x.Form != apd.Finite || !sum.Coeff.IsInt64() || !x.Coeff.IsInt64() {
		return false
	}
	a, b := sum.Coeff.Int64(), x.Coeff.Int64()
	if sum.Negative {
		a = -a
	}
	if x.Negative {
		b = -b
	}
	exp := min(sum.Exponent, x.Exponent)
	var ok1, ok2 bool
	if a, ok1 = scaleSmall(a, sum.Exponent-exp); !ok1 {
		return false
	}
	if b, ok2 = scaleSmall(b, x.Exponent-exp); !ok2 {
		return false
	}
	c := a + b
	if (a > 0 && b > 0 && c < 0) || (a < 0 && b < 0 && c >= 0) {
		return false // overflow
	}
	sum.SetFinite(c, exp)
	return true
}

// scaleSmall returns v times 10^n and whether it fits an int64.
func scaleSmall(v int64, n int32) (int64, bool) {
	if n == 0 {
		return v, true
	}
	if n < 0 || int(n) >= len(pow10) {
		return 0, false
	}
	p := pow10[n]
	if v > math.MaxInt64/p || v < math.MinInt64/p {
		return 0, false
	}
	return v * p, true
}

// decimalNumber returns d in the canonical form of event numbers (package
// event): plain notation, no exponent, no trailing zeros after the point,
// no sign for zero. Equal decimals give equal text, however they were
// computed: 0.10 + 0.90 is "1".
func decimalNumber(d *apd.Decimal) json.Number {
	if n, ok := smallDecimalNumber(d); ok {
		return n
	}
	var r apd.Decimal
	r.Reduce(d)
	if r.IsZero() {
		return "0"
	}
	return json.Number(r.Text('f'))
}

// averageOf returns sum / count rounded half to even to AvgDigits
// significant digits, in canonical form. count is positive.
func averageOf(sum *apd.Decimal, count int64) json.Number {
	var avg, n apd.Decimal
	n.SetInt64(count)
	if _, err := averaging.Quo(&avg, sum, &n); err != nil {
		// Unreachable: the divisor is a positive integer and the sum
		// within decimalBound.
		panic("engine: average: " + err.Error())
	}
	return decimalNumber(&avg)
}

// smallDecimalNumber is decimalNumber of a finite d whose coefficient
// fits an int64 and whose text is at most smallTextDigits digits long,
// made in one allocation (apd's reduction and text take several); false
// for any other d.
func smallDecimalNumber(d *apd.Decimal) (json.Number, bool) {
	if d.Form != apd.Finite || !d.Coeff.IsInt64() {
		return "", false
	}
	c, exp := d.Coeff.Int64(), int(d.Exponent)
	if c == 0 {
		return "0", true
	}
	for c%10 == 0 {
		c, exp = c/10, exp+1
	}
	if exp > smallTextDigits || exp < -smallTextDigits {
		return "", false
	}
	var buf [2*smallTextDigits + 24]byte
	b := buf[:0]
	if d.Negative {
		b = append(b, '-')
	}
	var digits [20]byte
	ds := strconv.AppendInt(digits[:0], c, 10)
	switch point := len(ds) + exp; {
	case exp >= 0:
		b = append(b, ds...)
		for range exp {
			b = append(b, '0')
		}
	case point > 0:
		b = append(append(append(b, ds[:point]...), '.'), ds[point:]...)
	default:
		b = append(b, '0', '.')
		for range -point {
			b = append(b, '0')
		}
		b = append(b, ds...)
	}
	return json.Number(b), true
}

// smallTextDigits bounds the exponent smallDecimalNumber writes out.
const smallTextDigits = 40
