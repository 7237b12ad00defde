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
	b, err := storage.AppendCanonicalNumber(dst, s)
	if err != nil {
		return dst, invalidReason(err)
	}
	return b, ""
}

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
