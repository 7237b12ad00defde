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
	var buf [48]byte
	b, err := AppendCanonicalNumber(buf[:0], s)
	if err != nil {
		return "", err
	}
	if string(b) == s {
		return json.Number(s), nil
	}
	return json.Number(b), nil
}

// AppendCanonicalNumber appends the canonical form of the JSON number s to
// dst, or returns dst unchanged and the error CanonicalNumber would. It
// serves callers that hold the number as bytes, as a request decoder
// does, or that reuse a buffer.
func AppendCanonicalNumber[T ~string | ~[]byte](dst []byte, s T) ([]byte, error) {
	n := len(s)
	i := 0
	neg := false
	if i < n && s[i] == '-' {
		neg = true
		i++
	}
	// Integer part: 0, or a digit 1-9 followed by digits.
	intStart := i
	switch {
	case i < n && s[i] == '0':
		i++
	case i < n && s[i] >= '1' && s[i] <= '9':
		for i < n && isDigit(s[i]) {
			i++
		}
	default:
		return dst, InvalidError{Reason: reasonNotNumber}
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < n && s[i] == '.' {
		i++
		fracStart = i
		for i < n && isDigit(s[i]) {
			i++
		}
		fracEnd = i
		if fracEnd == fracStart {
			return dst, InvalidError{Reason: reasonNotNumber}
		}
	}
	exp := 0
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < n && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		if i >= n || !isDigit(s[i]) {
			return dst, InvalidError{Reason: reasonNotNumber}
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
		return dst, InvalidError{Reason: reasonNotNumber}
	}

	// The mantissa's digits are s[intStart:intEnd] then s[fracStart:fracEnd];
	// position p < total indexes them as one run.
	intLen, fracLen := intEnd-intStart, fracEnd-fracStart
	total := intLen + fracLen
	at := func(p int) byte {
		if p < intLen {
			return s[intStart+p]
		}
		return s[fracStart+p-intLen]
	}
	first := 0
	for first < total && at(first) == '0' {
		first++
	}
	if first == total {
		return append(dst, '0'), nil
	}
	last := total - 1
	for at(last) == '0' {
		last--
	}
	k := last - first + 1
	if k > MaxNumberDigits {
		return dst, InvalidError{Reason: reasonTooPrecise}
	}
	// The value is ±D × 10^(point-k), D being the k digits first..last:
	// ±0.D × 10^point, whose first digit has the power point-1.
	point := exp - fracLen + (total - 1 - last) + k
	switch {
	case point-1 > MaxNumberExponent:
		return dst, InvalidError{Reason: reasonNumberTooBig}
	case point-1 < MinNumberExponent:
		return dst, InvalidError{Reason: reasonNumberTooTiny}
	}
	digits := func(dst []byte, from, to int) []byte {
		for p := first + from; p < first+to; p++ {
			dst = append(dst, at(p))
		}
		return dst
	}
	if neg {
		dst = append(dst, '-')
	}
	switch {
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
	return dst, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
