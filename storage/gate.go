package storage

import "sync"

// Gate keeps the close contract every backend shares: calls made after
// Close has begun return ErrClosed, and Close returns only once the
// calls in progress (and whatever else a backend counts as one, such as
// an open iterator) have ended. The zero Gate is open.
type Gate struct {
	mu     sync.RWMutex
	closed bool
	calls  sync.WaitGroup
}

// Enter admits a call, or returns ErrClosed. Every Enter that returns nil
// is paired with an Exit.
func (g *Gate) Enter() error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return ErrClosed
	}
	g.calls.Add(1)
	return nil
}

// Exit ends a call Enter admitted.
func (g *Gate) Exit() { g.calls.Done() }

// Close refuses later calls and waits for those in progress. It reports
// whether it was the first Close; a later one waits all the same.
func (g *Gate) Close() (first bool) {
	g.mu.Lock()
	first = !g.closed
	g.closed = true
	g.mu.Unlock()
	g.calls.Wait()
	return first
}

// Closed reports whether Close has begun.
func (g *Gate) Closed() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.closed
}
