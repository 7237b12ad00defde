package memtest

import (
	"runtime/metrics"
	"time"
)

// Metrics of the Go heap that SampleHeap reads, without stopping the
// world.
const (
	// HeapLive is what the last garbage collection found reachable:
	// what the code holds.
	HeapLive = "/gc/heap/live:bytes"
	// HeapObjects is the bytes of heap objects, live or not yet swept:
	// HeapLive and the garbage not yet collected, which depends on the
	// collector's pacing and on how much CPU it gets.
	HeapObjects = "/memory/classes/heap/objects:bytes"
)

// SampleHeap reads the runtime/metrics of bytes names every interval
// until the function it returns is called, which returns the highest
// value seen of each, in the order of names.
func SampleHeap(interval time.Duration, names ...string) (stop func() []uint64) {
	quit := make(chan struct{})
	done := make(chan []uint64)
	go func() {
		s := make([]metrics.Sample, len(names))
		for i, n := range names {
			s[i].Name = n
		}
		most := make([]uint64, len(names))
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			metrics.Read(s)
			for i := range s {
				most[i] = max(most[i], s[i].Value.Uint64())
			}
			select {
			case <-quit:
				done <- most
				return
			case <-tick.C:
			}
		}
	}()
	return func() []uint64 { close(quit); return <-done }
}

// Heap returns the runtime/metrics of bytes name now.
func Heap(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
