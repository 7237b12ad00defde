// Package clock lets the caller decide what time it is. Everything in
// timetable that needs the current time asks a Clock, so tests can walk
// weeks of simulated time in milliseconds.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
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
	if m.now.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return m.now
}

// Set moves the clock to t.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	m.now = t.UTC()
	m.mu.Unlock()
}

// Advance moves the clock forward by d and returns the new time.
func (m *Manual) Advance(d time.Duration) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.now.IsZero() {
		m.now = time.Unix(0, 0).UTC()
	}
	m.now = m.now.Add(d)
	return m.now
}
