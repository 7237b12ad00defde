package naming

import (
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/period"
)

// msDigits is the width of the millisecond numbers in range names.
const msDigits = 13

// maxMs bounds the millisecond numbers in range names: 13 digits.
const maxMs = 1e13 - 1

// rangeEnd returns the inclusive end Fineo writes: the next period's start
// minus one second.
func rangeEnd(p period.Period) int64 { return p.End.UnixMilli() - 1000 }

// checkRangePeriod returns why p cannot be written in a range name, or "".
func checkRangePeriod(p period.Period) string {
	if s, e := p.Start.UnixMilli(), rangeEnd(p); s < -maxMs || e > maxMs {
		return "period " + p.String() + " does not fit 13-digit Unix milliseconds"
	}
	return ""
}

// appendRange writes r's range-name body: start_end[_month_year].
func (n Namer) appendRange(b *strings.Builder, r Ref) {
	appendMs(b, r.Period.Start.UnixMilli())
	b.WriteByte('_')
	appendMs(b, rangeEnd(r.Period))
	if n.WriteTimeGrouping {
		b.WriteByte('_')
		b.WriteString(strconv.Itoa(int(r.WriteMonth.Month)))
		b.WriteByte('_')
		b.WriteString(strconv.Itoa(r.WriteMonth.Year))
	}
}

// appendMs writes ms zero-padded to 13 digits, after a '-' if negative.
func appendMs(b *strings.Builder, ms int64) {
	if ms < 0 {
		b.WriteByte('-')
		ms = -ms
	}
	s := strconv.FormatInt(ms, 10)
	for range msDigits - len(s) {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// parseRange reads a range-name body, or says why it cannot.
func (n Namer) parseRange(body string) (Ref, string) {
	parts := strings.Split(body, "_")
	switch {
	case n.WriteTimeGrouping && len(parts) == 2:
		return Ref{}, "no write month and year (want start_end_month_year)"
	case !n.WriteTimeGrouping && len(parts) == 4:
		return Ref{}, "a write month and year without write-time grouping (want start_end)"
	case n.WriteTimeGrouping && len(parts) != 4:
		return Ref{}, "not start_end_month_year"
	case !n.WriteTimeGrouping && len(parts) != 2:
		return Ref{}, "not start_end"
	}
	start, ok := parseMs(parts[0])
	if !ok {
		return Ref{}, "start " + strconv.Quote(parts[0]) + " is not 13 digits of Unix milliseconds"
	}
	end, ok := parseMs(parts[1])
	if !ok {
		return Ref{}, "end " + strconv.Quote(parts[1]) + " is not 13 digits of Unix milliseconds"
	}
	t := time.UnixMilli(start).UTC()
	p := n.Granularity.Of(t)
	if !p.Start.Equal(t) {
		return Ref{}, "start " + t.Format(time.RFC3339Nano) + " does not begin a " + n.Granularity.String() + " period"
	}
	if want := rangeEnd(p); end != want {
		return Ref{}, "end " + parts[1] + " is not the period's last second (" + strconv.FormatInt(want, 10) + ")"
	}
	r := Ref{Period: p}
	if n.WriteTimeGrouping {
		m, ok := parseSmall(parts[2], 2)
		if !ok || m < 1 || m > 12 {
			return Ref{}, "write month " + strconv.Quote(parts[2]) + " is not 1 to 12 without leading zeros"
		}
		y, ok := parseSmall(parts[3], 4)
		if !ok {
			return Ref{}, "write year " + strconv.Quote(parts[3]) + " is not a year from 0 to 9999"
		}
		r.WriteMonth = period.Month{Year: y, Month: time.Month(m)}
	}
	return r, ""
}

// parseMs reads an optional '-' and exactly 13 digits.
func parseMs(s string) (int64, bool) {
	digits, neg := strings.CutPrefix(s, "-")
	if len(digits) != msDigits || !allDigits(digits) {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseSmall reads a number of at most width digits, without leading
// zeros ("0" itself is allowed).
func parseSmall(s string, width int) (int, bool) {
	if s == "" || len(s) > width || !allDigits(s) || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

// allDigits reports whether every byte of s is an ASCII digit.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
