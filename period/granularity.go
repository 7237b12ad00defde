package period

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidGranularity is wrapped by the errors of ParseGranularity and
// Granularity.Validate.
var ErrInvalidGranularity = errors.New("timetable: invalid granularity")

// Granularity says how time is cut into periods. The zero value is not
// valid: Unit must be set.
type Granularity struct {
	// Unit is the length of a period.
	Unit Unit
	// WeekStart is the day weekly periods start on, at 00:00 UTC. The zero
	// value is Sunday. It must be Sunday for units other than Week, so
	// that two granularities that cut time the same way compare equal.
	WeekStart time.Weekday
}

// ParseGranularity reads a granularity by its unit's name: "hour", "6h",
// "12h", "day", "week", "month" or "quarter", in any letter case. Weeks
// start on Sunday unless the name is "week:" followed by an English
// weekday, as String writes it ("week:monday").
func ParseGranularity(s string) (Granularity, error) {
	name, day, hasDay := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	for u := Hour; u <= Quarter; u++ {
		if name != unitNames[u] {
			continue
		}
		g := Granularity{Unit: u}
		if !hasDay {
			return g, nil
		}
		if u != Week {
			break
		}
		for d := time.Sunday; d <= time.Saturday; d++ {
			if day == strings.ToLower(d.String()) {
				g.WeekStart = d
				return g, nil
			}
		}
		return Granularity{}, fmt.Errorf("parse granularity %q: %w: %q is not a day of the week", s, ErrInvalidGranularity, day)
	}
	return Granularity{}, fmt.Errorf("parse granularity %q: %w: want hour, 6h, 12h, day, week, week:<weekday>, month or quarter", s, ErrInvalidGranularity)
}

// String returns the name ParseGranularity reads back as g: the unit's
// name, followed for weeks that do not start on Sunday by a colon and the
// weekday ("week:monday").
func (g Granularity) String() string {
	if g.Unit == Week && g.WeekStart != time.Sunday {
		return "week:" + strings.ToLower(g.WeekStart.String())
	}
	return g.Unit.String()
}

// Validate reports whether g names a unit, and a weekday for weeks.
func (g Granularity) Validate() error {
	if !g.Unit.Valid() {
		return fmt.Errorf("%w: unit %d is not one of hour, 6h, 12h, day, week, month, quarter", ErrInvalidGranularity, int(g.Unit))
	}
	if g.WeekStart < time.Sunday || g.WeekStart > time.Saturday {
		return fmt.Errorf("%w: week start %d is not a day of the week", ErrInvalidGranularity, int(g.WeekStart))
	}
	if g.Unit != Week && g.WeekStart != time.Sunday {
		return fmt.Errorf("%w: a week start (%s) applies only to weekly periods, not %s", ErrInvalidGranularity, g.WeekStart, g.Unit)
	}
	return nil
}

// Nominal lengths of months and quarters: the mean Gregorian month (a
// 400-year cycle has 146097 days in 4800 months) and three of them.
const (
	nominalMonth   = 146097 * 86400 / 4800 * time.Second // 2629746 s
	nominalQuarter = 3 * nominalMonth
)

// Nominal returns the typical length of one of g's periods, for estimates
// and comparisons such as "two periods old": exact for hours, days and
// weeks, and the mean Gregorian length for months (30.436875 days) and
// quarters (91.310625 days), so that twelve months or four quarters make
// one mean year. Use Of, Next and Prev for actual boundaries.
func (g Granularity) Nominal() time.Duration {
	switch g.mustUnit() {
	case Hour:
		return time.Hour
	case SixHours:
		return 6 * time.Hour
	case TwelveHours:
		return 12 * time.Hour
	case Day:
		return 24 * time.Hour
	case Week:
		return 7 * 24 * time.Hour
	case CalendarMonth:
		return nominalMonth
	default:
		return nominalQuarter
	}
}

// mustUnit returns g's unit, and panics when g is not valid.
func (g Granularity) mustUnit() Unit {
	if err := g.Validate(); err != nil {
		panic("period: " + err.Error())
	}
	return g.Unit
}
