package pebblestore

import (
	"errors"
	"strings"
)

// DynamoDB's number limits: at most 38 significant digits, and a magnitude
// between 1E-130 and 9.99…E+125 (zero aside).
const (
	maxDigits    = 38
	maxMagnitude = 125
	minMagnitude = -130
)

var (
	errNotNumber     = errors.New("not a decimal number")
	errTooPrecise    = errors.New("more than 38 significant digits")
	errNumberTooBig  = errors.New("magnitude larger than 9.99E+125")
	errNumberTooTiny = errors.New("magnitude smaller than 1E-130")
)

// canonicalNumber returns the form DynamoDB stores a number in: plain
// decimal notation without exponent, without a '+' sign, without leading
// zeros or trailing fractional zeros, and "0" for every zero (1.50 -> 1.5,
// 1e3 -> 1000, -0.0 -> 0). It rejects what DynamoDB rejects: anything that
// is not a decimal literal, more than 38 significant digits, a magnitude
// out of range.
//
// This is on the write path of every number, so a literal already in
// canonical form is checked in one pass and returned as it is, without
// allocating.
func canonicalNumber(s string) (string, error) {
	if ok, err := isCanonical(s); ok || err != nil {
		return s, err
	}
	return recanonicalise(s)
}

// isCanonical reports whether s is in canonical form, and checks its range
// if so: -?(0|[1-9][0-9]*)(\.[0-9]*[1-9])? and not -0. A false result with
// a nil error means s may still be a number in another form.
func isCanonical(s string) (bool, error) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := i - intStart
	if intDigits == 0 || (intDigits > 1 && s[intStart] == '0') {
		return false, nil
	}
	intZero := intDigits == 1 && s[intStart] == '0'
	fracLead, fracDigits := 0, 0 // zeros right after the point, all digits
	if i < len(s) {
		if s[i] != '.' {
			return false, nil
		}
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = i - fracStart
		if i != len(s) || fracDigits == 0 || s[i-1] == '0' {
			return false, nil
		}
		for fracLead < fracDigits && s[fracStart+fracLead] == '0' {
			fracLead++
		}
	}
	if intZero {
		if fracDigits == 0 {
			return !neg, nil // "0" is canonical, "-0" is not
		}
		// 0.000ddd: significant digits are the fraction's after its
		// leading zeros; the magnitude is -(leading zeros + 1).
		return true, checkRange(fracDigits-fracLead, -(fracLead + 1))
	}
	// Trailing zeros of the integer part are not significant.
	sig := intDigits + fracDigits
	if fracDigits == 0 {
		for j := intStart + intDigits - 1; j > intStart && s[j] == '0'; j-- {
			sig--
		}
	}
	return true, checkRange(sig, intDigits-1)
}

// recanonicalise parses any decimal literal, [+-]?digits[.digits][e[+-]digits]
// with at least one digit before the exponent, and formats it canonically.
func recanonicalise(s string) (string, error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	// digits collects the mantissa's digits without the point; exp is the
	// power of ten of its last digit.
	var buf [64]byte
	digits := buf[:0]
	exp := 0
	seen := false
	for i < len(s) && isDigit(s[i]) {
		digits = appendDigit(digits, s[i])
		i++
		seen = true
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			digits = appendDigit(digits, s[i])
			exp--
			i++
			seen = true
		}
	}
	if !seen {
		return "", errNotNumber
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return "", errNotNumber
		}
		e := 0
		for i < len(s) && isDigit(s[i]) {
			if e < 1_000_000 { // saturate: far beyond any valid magnitude
				e = e*10 + int(s[i]-'0')
			}
			i++
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) {
		return "", errNotNumber
	}
	// Drop leading and trailing zeros: the value is digits × 10^exp.
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return "0", nil
	}
	if err := checkRange(len(digits), len(digits)+exp-1); err != nil {
		return "", err
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	point := len(digits) + exp // digits before the decimal point
	switch {
	case exp >= 0:
		b.Write(digits)
		for range exp {
			b.WriteByte('0')
		}
	case point > 0:
		b.Write(digits[:point])
		b.WriteByte('.')
		b.Write(digits[point:])
	default:
		b.WriteString("0.")
		for range -point {
			b.WriteByte('0')
		}
		b.Write(digits)
	}
	return b.String(), nil
}

// appendDigit appends a digit, dropping leading zeros early so that a
// literal with many of them does not grow the buffer.
func appendDigit(digits []byte, d byte) []byte {
	if len(digits) == 0 && d == '0' {
		return digits[:0:cap(digits)] // stays empty; exp still counts it
	}
	return append(digits, d)
}

// checkRange checks a nonzero number's significant digits and magnitude
// (the power of ten of its first significant digit).
func checkRange(sig, magnitude int) error {
	switch {
	case sig > maxDigits:
		return errTooPrecise
	case magnitude > maxMagnitude:
		return errNumberTooBig
	case magnitude < minMagnitude:
		return errNumberTooTiny
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
