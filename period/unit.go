package period

import "strconv"

// Unit is the length of a granularity's periods.
type Unit int

// The units a family may choose. The zero Unit is not one of them.
const (
	// Hour is one UTC hour.
	Hour Unit = iota + 1
	// SixHours is a quarter of a UTC day, starting at 00:00, 06:00, 12:00
	// or 18:00.
	SixHours
	// TwelveHours is half a UTC day, starting at 00:00 or 12:00.
	TwelveHours
	// Day is one UTC calendar day.
	Day
	// Week is seven UTC days starting on the granularity's WeekStart.
	Week
	// CalendarMonth is one calendar month. (The name Month is the type of
	// a write month.)
	CalendarMonth
	// Quarter is a calendar quarter: January to March, April to June, July
	// to September or October to December.
	Quarter
)

var unitNames = [...]string{
	Hour:          "hour",
	SixHours:      "6h",
	TwelveHours:   "12h",
	Day:           "day",
	Week:          "week",
	CalendarMonth: "month",
	Quarter:       "quarter",
}

// Valid reports whether u is one of the declared units.
func (u Unit) Valid() bool { return u >= Hour && u <= Quarter }

// String returns the name ParseGranularity reads for u: "hour", "6h",
// "12h", "day", "week", "month" or "quarter".
func (u Unit) String() string {
	if !u.Valid() {
		return "Unit(" + strconv.Itoa(int(u)) + ")"
	}
	return unitNames[u]
}
