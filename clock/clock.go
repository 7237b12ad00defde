// Package clock lets the caller decide what time it is. Everything in
// timetable that needs the current time, or to wait for a time, asks a
// Clock, so tests can walk weeks of simulated time in milliseconds.
package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock tells the current time, and makes timers that fire by it.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, when the clock has
	// moved d past the time it is made at.
	NewTimer(d time.Duration) *Timer
}

// Timer fires once, as time.Timer does, by the time of the clock that
// made it.
type Timer struct {
	// C receives the clock's time when the timer fires. It is buffered:
	// a timer fires whether or not anyone receives.
	C <-chan time.Time

	stop func() bool
}

// Stop prevents the timer from firing. It reports whether it did: false
// when the timer had already fired or been stopped.
func (t *Timer) Stop() bool { return t.stop() }

// Real is the wall clock, in UTC.
type Real struct{}

// Now returns the current UTC time.
func (Real) Now() time.Time { return time.Now().UTC() }

// NewTimer returns a timer of the wall clock: a time.Timer.
func (Real) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return &Timer{C: t.C, stop: t.Stop}
}

// Manual is a clock that moves only when told to. Its zero value stands at
// the Unix epoch. Its timers fire when Set or Advance moves it to or past
// their time. It may be used from several goroutines at once.
type Manual struct {
	mu  sync.Mutex
	now time.Time
	// timers are the timers that have not fired or been stopped.
	timers []*manualTimer
	// made is closed, and cleared, when a timer is made: WaitForTimers
	// waits on it.
	made chan struct{}
}

// manualTimer is a timer of a Manual clock.
type manualTimer struct {
	at time.Time
	c  chan time.Time
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

// Set moves the clock to t, firing the timers due by then.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = t.UTC()
	m.fireLocked()
}

// Advance moves the clock forward by d, firing the timers due by then,
// and returns the new time.
func (m *Manual) Advance(d time.Duration) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.nowLocked().Add(d)
	m.fireLocked()
	return m.now
}

// NewTimer returns a timer that fires when Set or Advance moves the clock
// d past its current time; at once when d is not positive.
func (m *Manual) NewTimer(d time.Duration) *Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{at: m.nowLocked().Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- m.nowLocked()
		return &Timer{C: t.c, stop: func() bool { return false }}
	}
	m.timers = append(m.timers, t)
	if m.made != nil {
		close(m.made)
		m.made = nil
	}
	return &Timer{C: t.c, stop: func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		i := slices.Index(m.timers, t)
		if i < 0 {
			return false
		}
		m.timers = slices.Delete(m.timers, i, i+1)
		return true
	}}
}

// fireLocked fires and forgets the timers due by the clock's time; m.mu
// is held.
func (m *Manual) fireLocked() {
	now := m.nowLocked()
	m.timers = slices.DeleteFunc(m.timers, func(t *manualTimer) bool {
		if t.at.After(now) {
			return false
		}
		t.c <- now
		return true
	})
}

// WaitForTimers returns once at least n timers of the clock wait to fire,
// or with ctx's error when ctx ends first. A test calls it to know that
// the code it drives waits on the clock before it moves the clock.
func (m *Manual) WaitForTimers(ctx context.Context, n int) error {
	for {
		m.mu.Lock()
		if len(m.timers) >= n {
			m.mu.Unlock()
			return nil
		}
		if m.made == nil {
			m.made = make(chan struct{})
		}
		made := m.made
		m.mu.Unlock()
		select {
		case <-made:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
