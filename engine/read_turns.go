package engine

import (
	"context"
	"sync"
	"time"

	"github.com/timetabledb/timetable/admission"
)

// seriesTurns bounds the series that one tenant's aggregates of every
// series summarise at once, across all its aggregates, to
// QueryParallelism: four such aggregates of a tenant run sixteen series
// at a time between them, not sixty-four, so that the goroutines ready to
// run, and the other tenants' wait for the CPU, do not grow with one
// tenant's aggregates. Its methods may be called from any number of
// goroutines at once.
type seriesTurns struct {
	size int
	mu   sync.Mutex
	// byTenant holds a channel of size turns per tenant that has had an
	// aggregate of every series; a turn is a value sent.
	byTenant map[string]chan struct{}
}

func newSeriesTurns(size int) *seriesTurns {
	return &seriesTurns{size: size, byTenant: map[string]chan struct{}{}}
}

// wait waits for one of tenant's turns, or for ctx to end, and returns
// the function that gives it back.
func (s *seriesTurns) wait(ctx context.Context, tenant string) (func(), error) {
	s.mu.Lock()
	turns := s.byTenant[tenant]
	if turns == nil {
		turns = make(chan struct{}, s.size)
		s.byTenant[tenant] = turns
	}
	s.mu.Unlock()
	select {
	case turns <- struct{}{}:
		return func() { <-turns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cpuKey is the context key of WithCPU.
type cpuKey struct{}

// WithCPU returns a context under which an aggregate of every series
// takes a slot of cpu (admission.CPU.AcquireFor) for the series it
// summarises, a turn of series at a time, as the server's writes do for
// their decoding and their write: so that other requests find a core
// whatever aggregates and writes run. The server, which owns the pool,
// sets it on the requests it serves from a store whose reads come from
// memory and local disk (Pebble); a slot held through a read that waits
// on the network (DynamoDB) would only idle a core. Without it an
// aggregate takes no slot.
func WithCPU(ctx context.Context, cpu *admission.CPU) context.Context {
	if cpu == nil {
		return ctx
	}
	return context.WithValue(ctx, cpuKey{}, cpu)
}

// cpuOf returns the pool WithCPU set, or nil: a nil pool gives no slot
// and waits for nothing.
func cpuOf(ctx context.Context) *admission.CPU {
	cpu, _ := ctx.Value(cpuKey{}).(*admission.CPU)
	return cpu
}

// cpuTurn is how long an aggregate's worker keeps a slot of its CPU pool
// (WithCPU)
// for series after series before it gives it back: long beside one
// series (microseconds), so that it does not queue again behind the
// writes that hold a slot for a request, short beside the time slice of
// Go's scheduler (10 ms), which the other tenants' requests would wait.
const cpuTurn = 200 * time.Microsecond
