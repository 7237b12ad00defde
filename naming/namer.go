package naming

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/timetabledb/timetable/period"
)

// ErrForeign is wrapped by the errors of Namer.Parse for names that are
// not the name of one of the namer's tables.
var ErrForeign = errors.New("timetable: not a table of this family")

// Namer formats and parses the table names of one family. Its zero value
// is not valid: set Scheme and Granularity, and call Validate before use.
// A Namer is a value; its methods may be called from any goroutine.
type Namer struct {
	// Prefix starts every name. It may be empty, and may use only the
	// characters of a table name.
	Prefix string
	// Scheme is how the period is written after the prefix.
	Scheme Scheme
	// Granularity is the length of the tables' periods.
	Granularity period.Granularity
	// WriteTimeGrouping adds the month the events were written to every
	// name.
	WriteTimeGrouping bool
}

// Ref says which table a name stands for: its event period and, with
// write-time grouping, its write month.
type Ref struct {
	// Period is the table's event period, a period of the namer's
	// granularity.
	Period period.Period
	// WriteMonth is the month the table's events were written, or the
	// zero Month without write-time grouping.
	WriteMonth period.Month
}

// Validate reports whether n is usable: a known scheme, a valid
// granularity, a prefix of table-name characters, and names that fit
// DynamoDB's 255-character limit.
func (n Namer) Validate() error {
	if n.Scheme != Range && n.Scheme != Date {
		return fmt.Errorf("%w: scheme %d is not range or date", ErrInvalidNamer, int(n.Scheme))
	}
	if err := n.Granularity.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidNamer, err)
	}
	if i := invalidChar(n.Prefix); i >= 0 {
		return fmt.Errorf("%w: prefix %q: byte %d (%q) is not one of [A-Za-z0-9_.-]", ErrInvalidNamer, n.Prefix, i, n.Prefix[i])
	}
	if longest := len(n.Prefix) + n.longestBody(); longest > MaxTableNameLen {
		return fmt.Errorf("%w: prefix %q is too long: names would reach %d characters, DynamoDB allows %d", ErrInvalidNamer, n.Prefix, longest, MaxTableNameLen)
	}
	return nil
}

// longestBody returns the length of the longest name after the prefix.
// Every body has at least 7 characters, so names are never too short.
func (n Namer) longestBody() int {
	if n.Scheme == Range {
		const ms = len("-0000000000000")
		if n.WriteTimeGrouping {
			return ms + 1 + ms + len("_12_9999")
		}
		return ms + 1 + ms
	}
	l := len(dateLayout(n.Granularity.Unit))
	if n.WriteTimeGrouping {
		l += len("_w2006-01")
	}
	return l
}

// checkRef returns why r is not a ref n can name, or "" when
// Parse(Format(r)) returns r: its period must be a period of n's
// granularity, in UTC, and within the scheme's range (Unix milliseconds of
// 13 digits for range names, years 0000 to 9999 for date names); it must
// have a write month, of a year from 0 to 9999, exactly when n groups by
// write time.
func (n Namer) checkRef(r Ref) string {
	p := r.Period
	if p.Start.Location() != time.UTC || p.End.Location() != time.UTC {
		return "period " + p.String() + " is not in UTC"
	}
	if want := n.Granularity.Of(p.Start); !want.Equal(p) {
		return fmt.Sprintf("period %s is not a %s period", p, n.Granularity)
	}
	var reason string
	if n.Scheme == Range {
		reason = checkRangePeriod(p)
	} else {
		reason = checkDatePeriod(p)
	}
	if reason != "" {
		return reason
	}
	m := r.WriteMonth
	switch {
	case !n.WriteTimeGrouping && !m.IsZero():
		return "write month " + m.String() + " without write-time grouping"
	case n.WriteTimeGrouping && m.IsZero():
		return "no write month with write-time grouping"
	case n.WriteTimeGrouping && (m.Month < 1 || m.Month > 12 || m.Year < 0 || m.Year > 9999):
		return fmt.Sprintf("write month %d of year %d is outside January 0000 to December 9999", int(m.Month), m.Year)
	}
	return ""
}

// Format returns the name of the table r stands for. It is the name Parse
// reads back as r when r is a ref n can name: a period of n's granularity,
// in UTC, within the scheme's range, with a write month exactly when n
// groups by write time. For other refs it returns a
// name that does not parse. n must be valid (see Validate); Format does
// not check, as it runs on every write.
func (n Namer) Format(r Ref) string {
	var b strings.Builder
	b.Grow(len(n.Prefix) + n.longestBody())
	b.WriteString(n.Prefix)
	if n.Scheme == Range {
		n.appendRange(&b, r)
	} else {
		n.appendDate(&b, r)
	}
	return b.String()
}

// Parse returns the table a name stands for. Names that are not exactly a
// name Format gives for one of n's tables — another prefix, the wrong
// shape for the scheme or granularity, a period not aligned to the
// granularity or its week start, digits written differently, a write
// month missing or present when it should not be — return an error
// wrapping ErrForeign. For every name Parse accepts, Format of the result
// is the name.
func (n Namer) Parse(name string) (Ref, error) {
	if err := n.Validate(); err != nil {
		return Ref{}, fmt.Errorf("parse table name %q: %w", name, err)
	}
	body, ok := strings.CutPrefix(name, n.Prefix)
	if !ok {
		return Ref{}, foreign(name, "prefix is not %q", n.Prefix)
	}
	var r Ref
	var reason string
	if n.Scheme == Range {
		r, reason = n.parseRange(body)
	} else {
		r, reason = n.parseDate(body)
	}
	if reason == "" {
		reason = n.checkRef(r)
	}
	if reason == "" && n.Format(r) != name {
		reason = "not written in canonical form (" + n.Format(r) + ")"
	}
	if reason != "" {
		return Ref{}, foreign(name, "%s", reason)
	}
	return r, nil
}

// foreign returns an error wrapping ErrForeign for name.
func foreign(name, format string, args ...any) error {
	return fmt.Errorf("parse table name %q: %w: %s", name, ErrForeign, fmt.Sprintf(format, args...))
}
