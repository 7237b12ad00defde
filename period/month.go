package period

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidMonth is wrapped by the errors of ParseMonth.
var ErrInvalidMonth = errors.New("timetable: invalid month")

// Month is a calendar month in UTC, such as the month a table's events
// were written in (write-time grouping). The zero Month means "no month".
type Month struct {
	// Year is the year, in the proleptic Gregorian calendar.
	Year int
	// Month is the month of the year, January to December.
	Month time.Month
}

// MonthOf returns the UTC calendar month that contains t.
func MonthOf(t time.Time) Month {
	y, m, _ := t.UTC().Date()
	return Month{Year: y, Month: m}
}

// ParseMonth reads a month written as String writes it: a four-digit year,
// a hyphen and a two-digit month, "2017-04".
func ParseMonth(s string) (Month, error) {
	if len(s) != 7 || s[4] != '-' || !digits(s[:4]) || !digits(s[5:]) {
		return Month{}, fmt.Errorf("parse month %q: %w: want YYYY-MM", s, ErrInvalidMonth)
	}
	m := Month{Year: atoi(s[:4]), Month: time.Month(atoi(s[5:]))}
	if m.Month < time.January || m.Month > time.December {
		return Month{}, fmt.Errorf("parse month %q: %w: month %d is not 01 to 12", s, ErrInvalidMonth, int(m.Month))
	}
	return m, nil
}

// String returns the month as "YYYY-MM", such as "2017-04".
func (m Month) String() string { return fmt.Sprintf("%04d-%02d", m.Year, int(m.Month)) }

// IsZero reports whether m is the zero Month.
func (m Month) IsZero() bool { return m == Month{} }

// Start returns the first instant of the month, at 00:00 UTC on its first
// day.
func (m Month) Start() time.Time { return time.Date(m.Year, m.Month, 1, 0, 0, 0, 0, time.UTC) }

// End returns the first instant after the month: the next month's Start.
func (m Month) End() time.Time { return m.Next().Start() }

// Period returns the month as the half-open period [Start, End).
func (m Month) Period() Period { return Period{Start: m.Start(), End: m.End()} }

// Next returns the month after m.
func (m Month) Next() Month { return MonthOf(m.Start().AddDate(0, 1, 0)) }

// Prev returns the month before m.
func (m Month) Prev() Month { return MonthOf(m.Start().AddDate(0, -1, 0)) }

// Compare returns -1 if m is before o, 0 if they are the same month and +1
// if m is after o.
func (m Month) Compare(o Month) int {
	if c := cmp.Compare(m.Year, o.Year); c != 0 {
		return c
	}
	return cmp.Compare(m.Month, o.Month)
}

// Before reports whether m is before o.
func (m Month) Before(o Month) bool { return m.Compare(o) < 0 }

// After reports whether m is after o.
func (m Month) After(o Month) bool { return m.Compare(o) > 0 }

// digits reports whether s is a non-empty run of ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// atoi returns the value of s, a short run of ASCII digits.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
