package event

import (
	"encoding/json"
	"fmt"
)

// DynamoDB's bounds on numbers: at most 38 significant digits, and a
// magnitude from 1e-130 to 9.9999999999999999999999999999999999999e125
// (developer guide, "Supported data types and naming rules").
const (
	maxDigits = 38
	minExp    = -130 // decimal exponent of the smallest magnitude
	maxExp    = 125  // decimal exponent of the largest magnitude
)

// Reasons a number is refused.
const (
	reasonNotNumber   = "not a JSON number"
	reasonTooPrecise  = "more than 38 significant digits"
	reasonNumberRange = "number out of DynamoDB's range"
)

// text is what the number and time parsers read: a string from Go callers,
// bytes of a request body from the decoders.
type text interface{ ~string | ~[]byte }

// CanonicalNumber returns the canonical form of the JSON number s, as
// described in the package documentation, or an error wrapping
// ErrInvalidEvent when s is not a JSON number or DynamoDB cannot store it.
// CanonicalNumber(CanonicalNumber(s)) is CanonicalNumber(s).
func CanonicalNumber(s string) (json.Number, error) {
	var buf [48]byte
	b, reason := appendCanonical(buf[:0], s)
	if reason != "" {
		return "", fmt.Errorf("%w: %q: %s", ErrInvalidEvent, s, reason)
	}
	if string(b) == s {
		return json.Number(s), nil
	}
	return json.Number(b), nil
}

// appendCanonical appends the canonical form of the JSON number s to dst.
// When s is not a JSON number or is out of DynamoDB's bounds it returns a
// reason instead.
func appendCanonical[T text](dst []byte, s T) ([]byte, string) {
	n := len(s)
	i := 0
	neg := false
	if i < n && s[i] == '-' {
		neg = true
		i++
	}
	// Integer part: 0 or a digit 1-9 followed by digits.
	intStart := i
	switch {
	case i < n && s[i] == '0':
		i++
	case i < n && s[i] >= '1' && s[i] <= '9':
		for i < n && isDigit(s[i]) {
			i++
		}
	default:
		return dst, reasonNotNumber
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
			return dst, reasonNotNumber
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
			return dst, reasonNotNumber
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
		return dst, reasonNotNumber
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
		return append(dst, '0'), ""
	}
	last := total - 1
	for at(last) == '0' {
		last--
	}
	k := last - first + 1
	if k > maxDigits {
		return dst, reasonTooPrecise
	}
	// The value is ±D × 10^(point-k), D being the k digits first..last:
	// ±0.D × 10^point.
	point := exp - fracLen + (total - 1 - last) + k
	if point-1 < minExp || point-1 > maxExp {
		return dst, reasonNumberRange
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
	return dst, ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
