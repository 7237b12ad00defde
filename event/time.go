package event

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/timetabledb/timetable/period"
)

var (
	// epoch is the earliest time an event may have: table names and keys
	// count from it.
	epoch = time.Unix(0, 0).UTC()
	// maxTime is the last instant whose Unix nanoseconds fit an int64.
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

const (
	reasonTime       = "time: not RFC 3339 or Unix milliseconds"
	reasonTimeFloat  = "time: Unix milliseconds must be an integer"
	reasonTimeRange  = "time: Unix milliseconds out of range"
	reasonTimeDigits = "time: a string of digits is not Unix milliseconds; send them as a JSON number"
	reasonTimeAbsent = "time: missing"
)

// ParseTime parses s as an RFC 3339 time, with a fraction of up to nine
// digits and any offset, or as an integer of Unix milliseconds, and returns
// it in UTC. It is meant for query parameters and command-line flags,
// where a number cannot be told from a string; in an event, time as a
// string of digits is refused.
func ParseTime(s string) (time.Time, error) {
	if t, ok := parseRFC3339(s); ok {
		return t, nil
	}
	if ms, reason := parseMillis(s); reason == "" {
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("parse time %q: not RFC 3339 or Unix milliseconds", s)
}

// ParseTimeAt parses s as ParseTime does, or as a time relative to now:
// "now", or "now" then "-" or "+" and a duration as period.ParseDuration
// reads it ("now-1h", "now-7d", "now+15m"). It is the one reader of the
// times of the HTTP API's parameters (from, to) and of the CLI's flags
// (--from, --to); now is the caller's clock, read once per request or
// command, so that "now-1h" and "now" name the same instant's hour.
func ParseTimeAt(s string, now time.Time) (time.Time, error) {
	rest, relative := strings.CutPrefix(s, "now")
	if !relative {
		return ParseTime(s)
	}
	now = now.UTC()
	if rest == "" {
		return now, nil
	}
	bad := fmt.Errorf("parse time %q: after now comes - or + and a duration (now-1h, now-7d)", s)
	sign := rest[0]
	if (sign != '-' && sign != '+') || len(rest) < 2 || !isDigit(rest[1]) {
		return time.Time{}, bad
	}
	d, err := period.ParseDuration(rest[1:])
	if err != nil || strings.TrimSpace(rest) != rest {
		return time.Time{}, bad
	}
	if sign == '-' {
		d = -d
	}
	return now.Add(d), nil
}

// IsRelativeTime reports whether s is a time relative to now, which
// ParseTimeAt reads and ParseTime does not.
func IsRelativeTime(s string) bool { return strings.HasPrefix(s, "now") }

// parseRFC3339 parses an RFC 3339 date-time (section 5.6), with a fraction
// of at most nine digits, and returns it in UTC.
func parseRFC3339[T text](s T) (time.Time, bool) {
	n := len(s)
	if n < len("2006-01-02T15:04:05Z") {
		return time.Time{}, false
	}
	num := func(at, width int) int {
		v := 0
		for i := at; i < at+width; i++ {
			if !isDigit(s[i]) {
				return -1
			}
			v = v*10 + int(s[i]-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, min, sec := num(11, 2), num(14, 2), num(17, 2)
	if s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	i := 19
	nsec := 0
	if s[i] == '.' {
		i++
		start := i
		for i < n && isDigit(s[i]) {
			nsec = nsec*10 + int(s[i]-'0')
			i++
		}
		digits := i - start
		if digits == 0 || digits > 9 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			nsec *= 10
		}
	}
	if i >= n {
		return time.Time{}, false
	}
	offset := 0
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if n-i != 6 || s[i+3] != ':' {
			return time.Time{}, false
		}
		oh, om := num(i+1, 2), num(i+4, 2)
		if oh < 0 || oh > 23 || om < 0 || om > 59 {
			return time.Time{}, false
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return time.Time{}, false
	}
	if i != n {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

// daysIn returns the number of days of a month of the proleptic Gregorian
// calendar.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

// parseMillis parses an integer of Unix milliseconds: an optional minus
// sign and decimal digits, nothing else.
func parseMillis[T text](s T) (int64, string) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		i, neg = 1, true
	}
	if i == len(s) {
		return 0, reasonTime
	}
	var v int64
	for ; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) {
			if c == '.' || c == 'e' || c == 'E' {
				return 0, reasonTimeFloat
			}
			return 0, reasonTime
		}
		if v > (math.MaxInt64-9)/10 {
			return 0, reasonTimeRange
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, ""
}

// checkTime returns why t is not an acceptable event time, or "".
func checkTime(t time.Time, lim *Limits, now time.Time) string {
	switch {
	case t.Before(epoch):
		return fmt.Sprintf("time %s is before 1970-01-01T00:00:00Z", t.UTC().Format(time.RFC3339Nano))
	case t.After(now.Add(lim.MaxFutureSkew)):
		return fmt.Sprintf("time %s is more than %s in the future", t.UTC().Format(time.RFC3339Nano), lim.MaxFutureSkew)
	case t.After(maxTime):
		return fmt.Sprintf("time %s is after %s, the last time timetable can store", t.UTC().Format(time.RFC3339Nano), maxTime.Format(time.RFC3339Nano))
	}
	return ""
}
