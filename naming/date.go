package naming

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/period"
)

// dateLayout returns the time layout of a date name's period part for a
// unit; quarters ("2006-Q1") are written by hand but have its length.
func dateLayout(u period.Unit) string {
	switch u {
	case period.Hour, period.SixHours, period.TwelveHours:
		return "2006-01-02-15"
	case period.Day, period.Week:
		return "2006-01-02"
	case period.CalendarMonth:
		return "2006-01"
	default:
		return "2006-Q1"
	}
}

// checkDatePeriod returns why p cannot be written in a date name, or "".
func checkDatePeriod(p period.Period) string {
	if y := p.Start.Year(); y < 0 || y > 9999 {
		return fmt.Sprintf("period %s does not start in a year from 0000 to 9999", p)
	}
	return ""
}

// appendDate writes r's date-name body: the period's start, then
// _wYYYY-MM with write-time grouping.
func (n Namer) appendDate(b *strings.Builder, r Ref) {
	b.WriteString(n.formatDate(r.Period.Start))
	if n.WriteTimeGrouping {
		b.WriteString("_w")
		b.WriteString(r.WriteMonth.String())
	}
}

// formatDate writes a period start as the date part of a name.
func (n Namer) formatDate(start time.Time) string {
	start = start.UTC()
	if n.Granularity.Unit == period.Quarter {
		return fmt.Sprintf("%04d-Q%d", start.Year(), (int(start.Month())-1)/3+1)
	}
	return start.Format(dateLayout(n.Granularity.Unit))
}

// parseDate reads a date-name body, or says why it cannot.
func (n Namer) parseDate(body string) (Ref, string) {
	date, month, grouped := strings.Cut(body, "_")
	var r Ref
	switch {
	case n.WriteTimeGrouping && !grouped:
		return Ref{}, "no _wYYYY-MM write month"
	case !n.WriteTimeGrouping && grouped:
		return Ref{}, "a write month (or other suffix) without write-time grouping"
	case grouped:
		s, ok := strings.CutPrefix(month, "w")
		m, err := period.ParseMonth(s)
		if !ok || err != nil {
			return Ref{}, fmt.Sprintf("suffix %q is not _wYYYY-MM", "_"+month)
		}
		r.WriteMonth = m
	}
	start, ok := n.parseDateStart(date)
	if !ok {
		return Ref{}, fmt.Sprintf("%q is not a date of the form %s", date, dateLayout(n.Granularity.Unit))
	}
	r.Period = n.Granularity.Of(start)
	if !r.Period.Start.Equal(start) {
		what := "a " + n.Granularity.String() + " period"
		if n.Granularity.Unit == period.Week {
			what = "a week starting " + n.Granularity.WeekStart.String()
		}
		return Ref{}, fmt.Sprintf("%s does not begin %s", date, what)
	}
	return r, ""
}

// parseDateStart reads the date part of a name as a UTC time.
func (n Namer) parseDateStart(s string) (time.Time, bool) {
	if n.Granularity.Unit != period.Quarter {
		t, err := time.Parse(dateLayout(n.Granularity.Unit), s)
		return t, err == nil
	}
	if len(s) != len("2006-Q1") || !allDigits(s[:4]) || s[4:6] != "-Q" || s[6] < '1' || s[6] > '4' {
		return time.Time{}, false
	}
	y, _ := strconv.Atoi(s[:4])
	return time.Date(y, time.Month(int(s[6]-'1')*3+1), 1, 0, 0, 0, 0, time.UTC), true
}
