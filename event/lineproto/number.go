package lineproto

import (
	"errors"

	"github.com/timetabledb/timetable/storage"
)

// appendNumber appends to dst the canonical form (storage.
// AppendCanonicalNumber) of a field's number as line protocol wrote it
// (raw, without its i or u suffix), or returns a reason to refuse the
// line. The rule is the JSON path's, so that a number means the same
// whichever way it is written: JSON's grammar, and DynamoDB's range and
// precision, with InfluxDB's two decimal forms that JSON's grammar lacks
// and that say a number exactly, a missing integer part (.5, -.5) and a
// missing fraction (1., 1.e3), and leading zeros (007i), as InfluxDB
// reads them. Anything else Go would read, and store changed, is
// refused: digits separated by _ (1_0, not 10), hexadecimal (0x1p4, not
// 16), a + sign, and a magnitude DynamoDB cannot hold (1e-400, not 0).
func appendNumber(dst, raw []byte) ([]byte, string) {
	b, err := storage.AppendCanonicalNumber(dst, raw)
	if err == nil {
		return b, ""
	}
	if fixed, ok := jsonDecimal(raw); ok {
		if b, err = storage.AppendCanonicalNumber(dst, fixed); err == nil {
			return b, ""
		}
	}
	var ie storage.InvalidError
	if errors.As(err, &ie) {
		return dst, "number " + string(raw) + ": " + ie.Reason
	}
	return dst, "number " + string(raw) + ": " + err.Error()
}

// jsonDecimal returns raw in JSON's grammar when it is one of InfluxDB's
// decimal forms that JSON lacks, which say a number exactly: a bare
// point (.5, 1.), or leading zeros (007i, as InfluxDB reads it). It
// returns false for any other form.
func jsonDecimal(raw []byte) ([]byte, bool) {
	s := raw
	var out []byte
	if len(s) > 0 && s[0] == '-' {
		out = append(out, '-')
		s = s[1:]
	}
	digits := func(s []byte) int {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := digits(s)
	intPart := s[:i]
	var frac []byte
	point := i < len(s) && s[i] == '.'
	if point {
		j := i + 1 + digits(s[i+1:])
		frac, s = s[i+1:j], s[j:]
	} else {
		s = s[i:]
	}
	if len(intPart) == 0 && len(frac) == 0 {
		return nil, false
	}
	for len(intPart) > 1 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) == 0 {
		intPart = []byte("0")
	}
	out = append(out, intPart...)
	if len(frac) > 0 {
		out = append(append(out, '.'), frac...)
	}
	return append(out, s...), true
}
