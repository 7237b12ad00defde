package pebblestore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// idleFlusher settles the store once writes have stopped for a while, as
// InfluxDB snapshots its cache and compacts when writes go cold: it
// flushes the memtable and compacts what the flushes wrote (Store.settle).
// Until then an idle store keeps its data twice, in the memtable and in
// the write-ahead logs that back it, and the logs are most of its disk (a
// few MB of events take more disk as log than as sstables). After the
// flush Pebble deletes the logs the memtable no longer needs (none are
// kept to reuse: cleaner.go), and the data is in sstables, compressed.
//
// A write bumps a counter; the flusher looks at it every Options.IdleFlush
// and settles when it has not moved since its last look and has since
// the last settle: between one and two periods after the last write. A
// store under steady writes never settles (its memtable flushes when
// full, as before), and an idle store never settles twice.
type idleFlusher struct {
	writes atomic.Uint64 // commits of the store, bumped by wrote
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// wrote records a commit. It may be called from any goroutine.
func (f *idleFlusher) wrote() { f.writes.Add(1) }

// start runs the flusher, every period, until stopFlushing; settle is
// the store's flush and compaction, given a context that stopFlushing
// cancels. A period of 0 or less starts nothing.
func (f *idleFlusher) start(period time.Duration, settle func(context.Context) error, failed func(error)) {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	if period <= 0 {
		return
	}
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		var seen, settled uint64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			n := f.writes.Load()
			if n != seen { // written to since the last look: not idle yet
				seen = n
				continue
			}
			if n == settled {
				continue
			}
			if err := settle(ctx); err != nil {
				if ctx.Err() == nil { // not stopped by stopFlushing
					failed(err)
				}
				continue
			}
			settled = n
		}
	}()
}

// stopFlushing stops the flusher, cancelling a settle in progress, and
// waits for it to return. It is called once, by Close, before the DB
// closes.
func (f *idleFlusher) stopFlushing() {
	f.cancel()
	f.done.Wait()
}
