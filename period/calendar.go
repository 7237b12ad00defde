package period

import "time"

// Of returns the period of g that contains t.
func (g Granularity) Of(t time.Time) Period {
	start := g.start(t.UTC())
	return Period{Start: start, End: g.after(start)}
}

// Next returns the period that follows p: the period of g containing
// p.End. For a period of g, Next(p).Start equals p.End.
func (g Granularity) Next(p Period) Period { return g.Of(p.End) }

// Prev returns the period that precedes p: the period of g containing the
// last nanosecond before p.Start. For a period of g, Prev(p).End equals
// p.Start, and Prev(Next(p)) equals p.
func (g Granularity) Prev(p Period) Period { return g.Of(p.Start.Add(-time.Nanosecond)) }

// Overlapping returns, in ascending order, every period of g that shares
// an instant with the closed range [from, to]: the period containing from,
// the period containing to, and all in between. It returns nil when to is
// before from. The caller bounds the range: an hourly granularity over a
// century is close to a million periods.
func (g Granularity) Overlapping(from, to time.Time) []Period {
	if to.Before(from) {
		return nil
	}
	var ps []Period
	for p := g.Of(from); !to.Before(p.Start); p = g.Next(p) {
		ps = append(ps, p)
	}
	return ps
}

// Aligned reports whether t is the first instant of one of g's periods.
func (g Granularity) Aligned(t time.Time) bool { return g.Of(t).Start.Equal(t) }

// start returns the first instant of the period containing t, a UTC time.
func (g Granularity) start(t time.Time) time.Time {
	y, m, d := t.Date()
	h := t.Hour()
	switch g.mustUnit() {
	case Hour:
		return time.Date(y, m, d, h, 0, 0, 0, time.UTC)
	case SixHours:
		return time.Date(y, m, d, h-h%6, 0, 0, 0, time.UTC)
	case TwelveHours:
		return time.Date(y, m, d, h-h%12, 0, 0, 0, time.UTC)
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case Week:
		back := (int(t.Weekday()) - int(g.WeekStart) + 7) % 7
		return time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	case CalendarMonth:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	default:
		return time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC)
	}
}

// after returns the start of the period after the one starting at start.
func (g Granularity) after(start time.Time) time.Time {
	switch g.Unit {
	case Hour:
		return start.Add(time.Hour)
	case SixHours:
		return start.Add(6 * time.Hour)
	case TwelveHours:
		return start.Add(12 * time.Hour)
	case Day:
		return start.AddDate(0, 0, 1)
	case Week:
		return start.AddDate(0, 0, 7)
	case CalendarMonth:
		return start.AddDate(0, 1, 0)
	default:
		return start.AddDate(0, 3, 0)
	}
}
