package period

import "time"

// Period is the half-open UTC interval [Start, End).
type Period struct {
	// Start is the first instant of the period.
	Start time.Time
	// End is the first instant after the period: the next period's Start.
	End time.Time
}

// Contains reports whether t lies in the period: Start <= t < End, to the
// nanosecond.
func (p Period) Contains(t time.Time) bool {
	return !t.Before(p.Start) && t.Before(p.End)
}

// Overlaps reports whether the closed range [from, to] and the period
// share an instant. An empty range (to before from) overlaps nothing.
func (p Period) Overlaps(from, to time.Time) bool {
	return !to.Before(from) && from.Before(p.End) && !to.Before(p.Start)
}

// Duration returns the length of the period.
func (p Period) Duration() time.Duration { return p.End.Sub(p.Start) }

// IsZero reports whether p is the zero Period.
func (p Period) IsZero() bool { return p.Start.IsZero() && p.End.IsZero() }

// Equal reports whether p and q have the same boundaries, whatever the
// locations of their times.
func (p Period) Equal(q Period) bool { return p.Start.Equal(q.Start) && p.End.Equal(q.End) }

// String returns the period as "[start, end)" in RFC 3339.
func (p Period) String() string {
	return "[" + p.Start.Format(time.RFC3339Nano) + ", " + p.End.Format(time.RFC3339Nano) + ")"
}
