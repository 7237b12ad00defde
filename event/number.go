package event

import (
	"errors"

	"github.com/timetabledb/timetable/jsonnum"
	"github.com/timetabledb/timetable/storage"
)

// Numbers are canonicalized by package storage, which owns DynamoDB's
// rules for them (storage.CanonicalNumber): an event's numbers are
// refused exactly when a store would refuse them, and are stored and
// hashed in the form every store returns.

// text is what the number and time parsers read: a string from Go callers,
// bytes of a request body from the decoders.
type text interface{ ~string | ~[]byte }

// appendNumber appends the canonical form of the JSON number s to dst, or
// returns dst and the reason s is refused.
func appendNumber[T text](dst []byte, s T) ([]byte, string) {
	if shortCanonical(s) {
		return append(dst, s...), ""
	}
	b, err := storage.AppendCanonicalNumber(dst, s)
	if err != nil {
		return dst, invalidReason(err)
	}
	return b, ""
}

// shortCanonical reports whether s is a JSON number of at most
// shortNumber bytes in canonical form, as most numbers of a request
// are: -?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?, not "-0". Such a number is
// within DynamoDB's bounds (38 digits, powers of ten from -130 to 125),
// and storage.CanonicalNumber returns it as it is: one pass over its
// bytes tells, where reading it as a decimal takes two.
func shortCanonical[T text](s T) bool {
	n := len(s)
	if n == 0 || n > shortNumber {
		return false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	switch {
	case i < n && s[i] == '0':
		i++
		if i == n {
			return s[0] != '-'
		}
	case i < n && '1' <= s[i] && s[i] <= '9':
		for i++; i < n && isDigit(s[i]); i++ {
		}
		if i == n {
			return true
		}
	default:
		return false
	}
	if s[i] != '.' || i+1 == n || s[n-1] == '0' {
		return false
	}
	for i++; i < n; i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// shortNumber is the longest number shortCanonical takes: at most 19
// digits, and powers of ten from -19 to 18.
const shortNumber = 20

// invalidReason returns what a storage.InvalidError says is wrong, without
// its path; the caller knows where the value is.
func invalidReason(err error) string {
	var ie storage.InvalidError
	if errors.As(err, &ie) {
		return ie.Reason
	}
	return err.Error()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// IsJSONNumber reports whether s is a JSON number literal and nothing
// else: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, which JSON
// encoders write as it is. It checks in one pass, without allocating.
func IsJSONNumber(s string) bool { return jsonnum.Valid(s) }
