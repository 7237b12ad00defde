package pebblestore

import (
	"sync"
	"sync/atomic"
	"time"
)

// idleFlusher flushes the store's memtable to an sstable once writes
// have stopped for a while, as InfluxDB snapshots its cache when writes
// go cold: until then an idle store keeps its data twice, in the memtable
// and in the write-ahead logs that back it, and the logs are most of its
// disk (a few MB of events take more disk as log than as sstables). After
// the flush Pebble deletes the logs the memtable no longer needs, but for
// the few it keeps to reuse (MemTableStopWritesThreshold + 1, the oldest
// first, so the small ones of a store that has received little), and the
// data is in sstables, compressed.
//
// A write bumps a counter; the flusher looks at it every Options.IdleFlush
// and flushes when it has not moved since its last look and has since
// the last flush: between one and two periods after the last write. A
// store under steady writes never flushes early (its memtable flushes
// when full, as before), and an idle store never flushes twice.
type idleFlusher struct {
	writes atomic.Uint64 // commits of the store, bumped by wrote
	stop   chan struct{}
	done   sync.WaitGroup
}

// wrote records a commit. It may be called from any goroutine.
func (f *idleFlusher) wrote() { f.writes.Add(1) }

// start runs the flusher, every period, until stopFlushing; flush is the
// store's memtable flush. A period of 0 or less starts nothing.
func (f *idleFlusher) start(period time.Duration, flush func() error, failed func(error)) {
	f.stop = make(chan struct{})
	if period <= 0 {
		return
	}
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		var seen, flushed uint64
		for {
			select {
			case <-f.stop:
				return
			case <-tick.C:
			}
			n := f.writes.Load()
			if n != seen { // written to since the last look: not idle yet
				seen = n
				continue
			}
			if n == flushed {
				continue
			}
			if err := flush(); err != nil {
				failed(err)
				continue
			}
			flushed = n
		}
	}()
}

// stopFlushing stops the flusher and waits for a flush in progress. It is
// called once, by Close, before the DB closes.
func (f *idleFlusher) stopFlushing() {
	close(f.stop)
	f.done.Wait()
}
