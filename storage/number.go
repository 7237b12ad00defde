package storage

import "encoding/json"

// Numbers are the one attribute type whose text has many spellings: 1,
// 1.0, 10e-1 and 1e0 are one value. DynamoDB keeps a number's value, not
// its text, and answers it in one form; every backend stores that form,
// so that a number reads back the same from all of them, and package
// event hashes it so that one value gives one event id.
//
// The canonical form is plain decimal notation: never an exponent, no
// sign for zero and no plus sign, no leading zeros, no trailing zeros
// after the point (1.50 is 1.5, 1.5e2 is 150, 1e-3 is 0.001, -0.0 is 0).
// The extremes are long: 1E-130 takes 132 characters.

// Reasons a number is refused.
const (
	reasonNotNumber     = "not a JSON number"
	reasonTooPrecise    = "more than 38 significant digits"
	reasonNumberTooBig  = "number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125"
	reasonNumberTooTiny = "number out of DynamoDB's range: magnitude below 1E-130"
)

// CanonicalNumber returns the canonical form of the JSON number s (see
// above), or an InvalidError when s is not a JSON number (encoding/json's
// grammar: no plus sign, no leading zeros, digits on both sides of a
// point) or DynamoDB cannot hold it: more than MaxNumberDigits
// significant digits, or a magnitude out of range. It allocates only when
// s is not canonical already. CanonicalNumber(CanonicalNumber(s)) is
// CanonicalNumber(s).
func CanonicalNumber(s string) (json.Number, error) {
	d, reason := parseDecimal(s)
	switch {
	case reason != "":
		return "", InvalidError{Reason: reason}
	case d.canonical:
		return json.Number(s), nil
	}
	return json.Number(d.appendTo(nil)), nil
}

// AppendCanonicalNumber appends the canonical form of the JSON number s to
// dst, or returns dst unchanged and the error CanonicalNumber would. It
// serves callers that hold the number as bytes, as a request decoder
// does, or that reuse a buffer.
func AppendCanonicalNumber[T ~string | ~[]byte](dst []byte, s T) ([]byte, error) {
	d, reason := parseDecimal(s)
	if reason != "" {
		return dst, InvalidError{Reason: reason}
	}
	return d.appendTo(dst), nil
}

// decimal is a JSON number read by parseDecimal: ±0.D × 10^point, D being
// the k significant digits of its mantissa from the first-th on. The
// mantissa's digits are s[intStart:intStart+intLen] then those from
// fracStart on, indexed as one run by at. k is 0 for zero.
type decimal[T ~string | ~[]byte] struct {
	s                           T
	neg                         bool
	intStart, intLen, fracStart int
	first, k, point             int
	// canonical is set when s is in canonical form already.
	canonical bool
}

// parseDecimal reads the JSON number s and checks it against DynamoDB's
// bounds, or returns the reason it is refused. It is the one reading of
// a number's text: the canonical form (appendTo) and the size DynamoDB
// counts (size) are both computed from what it returns.
func parseDecimal[T ~string | ~[]byte](s T) (decimal[T], string) {
	d := decimal[T]{s: s}
	n := len(s)
	i := 0
	if i < n && s[i] == '-' {
		d.neg = true
		i++
	}
	// Integer part: 0, or a digit 1-9 followed by digits.
	d.intStart = i
	switch {
	case i < n && s[i] == '0':
		i++
	case i < n && s[i] >= '1' && s[i] <= '9':
		for i < n && isDigit(s[i]) {
			i++
		}
	default:
		return d, reasonNotNumber
	}
	d.intLen = i - d.intStart
	d.fracStart = i
	fracLen := 0
	if i < n && s[i] == '.' {
		i++
		d.fracStart = i
		for i < n && isDigit(s[i]) {
			i++
		}
		fracLen = i - d.fracStart
		if fracLen == 0 {
			return d, reasonNotNumber
		}
	}
	exp := 0
	hasExp := i < n && (s[i] == 'e' || s[i] == 'E')
	if hasExp {
		i++
		expNeg := false
		if i < n && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		if i >= n || !isDigit(s[i]) {
			return d, reasonNotNumber
		}
		for ; i < n && isDigit(s[i]); i++ {
			if exp < 1e9 { // saturate: anything this large is out of range anyway
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != n {
		return d, reasonNotNumber
	}

	// The grammar leaves a canonical number only an exponent, trailing
	// zeros after the point, and the sign of zero to get rid of.
	d.canonical = !hasExp && (fracLen == 0 || s[n-1] != '0')
	total := d.intLen + fracLen
	for d.first < total && d.at(d.first) == '0' {
		d.first++
	}
	if d.first == total {
		d.canonical = d.canonical && !d.neg
		d.neg = false
		return d, "" // zero
	}
	last := total - 1
	for d.at(last) == '0' {
		last--
	}
	d.k = last - d.first + 1
	if d.k > MaxNumberDigits {
		return d, reasonTooPrecise
	}
	// The value is ±D × 10^(point-k): ±0.D × 10^point, whose first digit
	// has the power point-1.
	d.point = exp - fracLen + (total - 1 - last) + d.k
	switch {
	case d.point-1 > MaxNumberExponent:
		return d, reasonNumberTooBig
	case d.point-1 < MinNumberExponent:
		return d, reasonNumberTooTiny
	}
	return d, ""
}

// at returns the mantissa's p-th digit.
func (d *decimal[T]) at(p int) byte {
	if p < d.intLen {
		return d.s[d.intStart+p]
	}
	return d.s[d.fracStart+p-d.intLen]
}

// appendTo appends the canonical form of d to dst.
func (d *decimal[T]) appendTo(dst []byte) []byte {
	switch {
	case d.canonical:
		return append(dst, d.s...)
	case d.k == 0:
		return append(dst, '0')
	}
	digits := func(dst []byte, from, to int) []byte {
		for p := d.first + from; p < d.first+to; p++ {
			dst = append(dst, d.at(p))
		}
		return dst
	}
	if d.neg {
		dst = append(dst, '-')
	}
	switch k, point := d.k, d.point; {
	case point >= k: // an integer: the digits, then zeros
		dst = digits(dst, 0, k)
		for z := k; z < point; z++ {
			dst = append(dst, '0')
		}
	case point > 0: // the point falls among the digits
		dst = digits(dst, 0, point)
		dst = append(dst, '.')
		dst = digits(dst, point, k)
	default: // below 1: zeros after the point, then the digits
		dst = append(dst, '0', '.')
		for z := point; z < 0; z++ {
			dst = append(dst, '0')
		}
		dst = digits(dst, 0, k)
	}
	return dst
}

// size returns the bytes DynamoDB counts for d (see NumberSize): a byte
// for the exponent, one per pair of significant digits, the pairs
// aligned on the decimal point, and one more for a negative number.
func (d *decimal[T]) size() int {
	if d.k == 0 {
		return 1
	}
	digits := d.k
	// The first digit has the power point-1; when that is even, the
	// digit has a pair to itself.
	if (d.point-1)%2 == 0 {
		digits++
	}
	n := 1 + (digits+1)/2
	if d.neg {
		n++
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
