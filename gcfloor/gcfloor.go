// Package gcfloor keeps the Go collector from running more often than a
// heap of a given size needs. Go's collector starts a cycle when the heap
// has grown by GOGC percent (100) of what the last cycle left live: a
// server whose live heap is small and which allocates fast (one tenant's
// writers at their full rate) collects each time it has allocated as much
// as its live heap, many times a second, each cycle taking a quarter of
// the cores for its marking and stopping the world twice, which every
// other tenant's requests wait through (make bench's limits rows give the
// server's GC pauses beside another tenant's p99: docs/benchmarks.md).
// Floor raises GOGC after each cycle, so that the next starts no
// sooner than Headroom bytes past the live heap; a larger live heap keeps
// GOGC's own goal. The memory limit (GOMEMLIMIT) still bounds the heap:
// near it the collector runs as often as it must whatever GOGC says.
//
// This is the GC tuner of Uber's and others' large Go services, with a
// fixed headroom rather than a target of the container's memory.
package gcfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// DefaultHeadroom is the garbage the heap may grow by past its live part
// before a cycle starts, when GOGC's percent of the live heap is less.
const DefaultHeadroom = 64 << 20

// floors are the floors started and not stopped, in this process: GOGC
// as it was before the first, which the last one's Stop sets back.
var floors struct {
	sync.Mutex
	active  int
	percent int
}

// Floor raises GOGC after each collection so that the next starts no
// sooner than its headroom past the live heap (see the package doc).
type Floor struct {
	headroom uint64
	// percent is GOGC as it was at Start: the least Floor sets.
	percent int
	// mu orders adjust and Stop: nothing is set after Stop.
	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
	last    atomic.Int64
}

// Start begins keeping the floor of headroom bytes (DefaultHeadroom when
// zero or less) and returns it, or returns nil and changes nothing when
// the environment gives GOGC or the collector is off: an operator's GOGC
// stands as given.
func Start(headroom int64) *Floor {
	if headroom <= 0 {
		headroom = DefaultHeadroom
	}
	if _, given := os.LookupEnv("GOGC"); given {
		return nil
	}
	floors.Lock()
	defer floors.Unlock()
	if floors.active == 0 {
		floors.percent = debug.SetGCPercent(-1)
		debug.SetGCPercent(floors.percent)
	}
	percent := floors.percent
	if percent < 0 {
		return nil
	}
	floors.active++
	f := &Floor{headroom: uint64(headroom), percent: percent, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	f.last.Store(int64(percent))
	f.arm()
	return f
}

// arm sets a finalizer on a new object, which the next collection finds
// unreachable: it runs after that collection, adjusts GOGC and arms
// again.
func (f *Floor) arm() {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		if f.adjust() {
			f.arm()
		}
	})
}

// adjust sets GOGC from the live heap of the collection just ended; it
// returns false once the floor is stopped.
func (f *Floor) adjust() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.sample)
	if f.sample[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	p := Percent(f.sample[0].Value.Uint64(), f.headroom, f.percent)
	if int64(p) != f.last.Load() {
		f.last.Store(int64(p))
		debug.SetGCPercent(p)
	}
	return true
}

// Percent returns the GOGC that lets a heap of live bytes grow by at
// least headroom bytes before the next collection, and by at least
// percent percent of live.
func Percent(live, headroom uint64, percent int) int {
	if live == 0 {
		live = 1
	}
	need := math.Ceil(float64(headroom) * 100 / float64(live))
	if need > math.MaxInt32 {
		need = math.MaxInt32
	}
	return max(percent, int(need))
}

// GOGC returns the GOGC the floor last set.
func (f *Floor) GOGC() int { return int(f.last.Load()) }

// Stop ends the floor; the last of the process's floors to stop sets
// GOGC back to what it was before the first started.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	floors.Lock()
	defer floors.Unlock()
	if floors.active--; floors.active == 0 {
		debug.SetGCPercent(floors.percent)
	}
}
