package event

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Precision is the unit of an event time sent as an integer, as InfluxDB's
// precision parameter names it. The zero value, PrecisionAuto, reads
// milliseconds and refuses integers that cannot be meant as milliseconds.
type Precision int

// Precisions.
const (
	// PrecisionAuto reads integer times as Unix milliseconds, and refuses
	// those before 2001-01-01 as milliseconds (below 978307200000): such a
	// number is a time in Unix seconds (1795262401 would be 1970-01-21 as
	// milliseconds) or a mistake, and guessing would store it in 1970.
	PrecisionAuto Precision = iota
	// PrecisionSeconds reads integer times as Unix seconds.
	PrecisionSeconds
	// PrecisionMillis reads integer times as Unix milliseconds, whatever
	// their value.
	PrecisionMillis
	// PrecisionMicros reads integer times as Unix microseconds.
	PrecisionMicros
	// PrecisionNanos reads integer times as Unix nanoseconds.
	PrecisionNanos
	// PrecisionMinutes reads integer times as minutes since the Unix
	// epoch, as InfluxDB 1.x's precision=m.
	PrecisionMinutes
	// PrecisionHours reads integer times as hours since the Unix epoch,
	// as InfluxDB 1.x's precision=h.
	PrecisionHours
)

// secondsLike is the first instant PrecisionAuto takes as milliseconds:
// 2001-01-01T00:00:00Z.
var secondsLike = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// ParsePrecision reads a precision as a request names it: "h", "m", "s",
// "ms", "us" (or "u", "µs"), "ns" (or "n"), and "" for PrecisionAuto.
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(s) {
	case "":
		return PrecisionAuto, nil
	case "h":
		return PrecisionHours, nil
	case "m":
		return PrecisionMinutes, nil
	case "s":
		return PrecisionSeconds, nil
	case "ms":
		return PrecisionMillis, nil
	case "us", "u", "µs":
		return PrecisionMicros, nil
	case "ns", "n":
		return PrecisionNanos, nil
	}
	return 0, fmt.Errorf("precision %q: use h, m, s, ms, us or ns", s)
}

// String returns the name ParsePrecision reads.
func (p Precision) String() string {
	return [...]string{"", "s", "ms", "us", "ns", "m", "h"}[p]
}

// valid reports whether p is one of the precisions.
func (p Precision) valid() bool { return p >= PrecisionAuto && p <= PrecisionHours }

// Time returns the time of the integer n at precision p, or an error
// saying why it is refused: for decoders of other formats (line protocol)
// that read integer times as this package does.
func (p Precision) Time(n int64) (time.Time, error) {
	t, reason := p.timeOf(n)
	if reason != "" {
		return time.Time{}, errors.New(reason)
	}
	return t, nil
}

// timeOf returns the time of the integer n at precision p, or why it is
// refused.
func (p Precision) timeOf(n int64) (time.Time, string) {
	switch p {
	case PrecisionSeconds:
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return time.Time{}, "time: Unix seconds out of range"
		}
		return time.Unix(n, 0).UTC(), ""
	case PrecisionMinutes, PrecisionHours:
		unit := int64(time.Minute)
		if p == PrecisionHours {
			unit = int64(time.Hour)
		}
		if n > math.MaxInt64/unit || n < math.MinInt64/unit {
			return time.Time{}, fmt.Sprintf("time: %d %s since the Unix epoch out of range", n, map[bool]string{true: "hours", false: "minutes"}[p == PrecisionHours])
		}
		return time.Unix(0, n*unit).UTC(), ""
	case PrecisionMicros:
		return time.UnixMicro(n).UTC(), ""
	case PrecisionNanos:
		return time.Unix(0, n).UTC(), ""
	case PrecisionAuto:
		if n >= 0 && n < secondsLike {
			return time.Time{}, fmt.Sprintf("time: %d is before 2001 as Unix milliseconds (%s), so it is taken for Unix seconds or a mistake: send milliseconds, or say precision=s for seconds (precision=ms keeps it as milliseconds)",
				n, time.UnixMilli(n).UTC().Format(time.RFC3339Nano))
		}
	}
	return time.UnixMilli(n).UTC(), ""
}
