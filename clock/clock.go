// Package clock says what time it is, for the code whose result depends
// on the date: which table an event goes to, when a table is made, moves
// tier or is past its retention, when a lease ends, what "now" means in a
// query. Everything of timetable that reads the current time asks a
// Clock, so that a caller may run it at a date of its choosing: the CLI
// at TIMETABLE_NOW, a lifecycle cycle at a chosen time, a test on fixed
// dates or walking weeks in steps.
//
// A Clock does not wait. Code that waits (a retry's backoff, the
// lifecycle's interval, a tenant's write rate) uses the time package's
// timers, which tests run on a fake clock with testing/synctest.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
}

// Real is the wall clock, in UTC.
type Real struct{}

// Now returns the current UTC time.
func (Real) Now() time.Time { return time.Now().UTC() }

// Manual is a clock that moves only when told to. Its zero value stands at
// the Unix epoch. It may be used from several goroutines at once.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a Manual clock standing at t.
func NewManual(t time.Time) *Manual { return &Manual{now: t.UTC()} }

// Now returns the clock's time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nowLocked()
}

// nowLocked returns the clock's time; m.mu is held.
func (m *Manual) nowLocked() time.Time {
	if m.now.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return m.now
}

// Set moves the clock to t.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = t.UTC()
}

// Advance moves the clock forward by d and returns the new time.
func (m *Manual) Advance(d time.Duration) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.nowLocked().Add(d)
	return m.now
}
