// Package fenceload runs archiving under load: a server on the real
// clock, with its own lifecycle, takes batches of events from writers,
// 70% of them now and 30% in the oldest day a family of day tables kept
// three days still has, while reconcilers without a lease, whose clocks
// run a day ahead, fence, archive and delete that day's table under the
// writers, again and again. It then asks a query of the range, by a
// fresh server reading the live tables and the archive reader, and counts the
// acknowledged events it answers, misses and answers twice.
//
// The archive package's TestNoAcknowledgedEventHiddenUnderLoad runs it
// for a few seconds on every backend, and `make bench -only=fence` for a
// minute.
package fenceload

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Options shape a run.
type Options struct {
	// Dir holds the archives and the archive reader's cache.
	Dir string
	// Duration is how long the writers write; when zero, until the
	// oldest day's table reaches generation Generations (and a route's
	// time more), at most a minute.
	Duration    time.Duration
	Generations int64
	// Writers and Reconcilers count them (3 each by default); Batch is
	// the events a write posts (20).
	Writers, Reconcilers, Batch int
	// RouteTTL and WriteTimeout are the server's (100 ms, 1 s);
	// FenceSettle the reconcilers' (their sum and 500 ms), so that a
	// fence settles once the server's routes and writes are over.
	RouteTTL, WriteTimeout, FenceSettle time.Duration
}

// Result is what a run found.
type Result struct {
	// Acknowledged counts the events of the writes that succeeded;
	// Refused the writes refused with storage.ErrUnavailable (a fenced
	// table: 503, retried by a client); TimedOut the writes that ran
	// past the write timeout (a store slowed by the machine's load: not
	// acknowledged, and retried by a client as a 503 is).
	Acknowledged, Refused, TimedOut int
	// Answered counts the acknowledged events the query answered, Lost
	// those it did not, Duplicated the events it answered more than once.
	Answered, Lost, Duplicated int
	// Generations is the generation the oldest day's table reached.
	Generations int64
}

func (r Result) String() string {
	return fmt.Sprintf("%d acknowledged (%d writes refused, %d timed out), %d answered, %d lost, %d duplicated; the oldest day's table reached generation %d",
		r.Acknowledged, r.Refused, r.TimedOut, r.Answered, r.Lost, r.Duplicated, r.Generations)
}

// Run runs the load on s with the first family of cfg, made a family of
// day tables kept three days and archived to a folder of o.Dir, and
// reports what a query answers afterwards. cfg's meta table must be set
// (the engine's default on Pebble).
func Run(ctx context.Context, s storage.Store, cfg family.Schema, o Options) (Result, error) {
	o.Writers, o.Reconcilers, o.Batch = cmp.Or(o.Writers, 3), cmp.Or(o.Reconcilers, 3), cmp.Or(o.Batch, 20)
	o.RouteTTL, o.WriteTimeout = cmp.Or(o.RouteTTL, 100*time.Millisecond), cmp.Or(o.WriteTimeout, time.Second)
	o.FenceSettle = cmp.Or(o.FenceSettle, o.RouteTTL+o.WriteTimeout+500*time.Millisecond)

	url := "file://" + filepath.ToSlash(filepath.Join(o.Dir, "archives"))
	f := &cfg.Families[0]
	f.Granularity = period.Granularity{Unit: period.Day}
	f.WriteTimeGrouping = false
	f.Retention = 3 * 24 * time.Hour
	f.Archive = url
	reg := registry.New(s, cfg.MetaTable)

	server := clock.Real{}
	ahead := aheadClock{24 * time.Hour}
	archives := archive.NewReader(archive.ReaderOptions{CacheDir: filepath.Join(o.Dir, "archive-cache")})
	defer archives.Close()
	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: server, Archives: archives, RouteTTL: o.RouteTTL, WriteTimeout: o.WriteTimeout})
	if err != nil {
		return Result{}, err
	}
	defer db.Close()
	quiet := slog.New(slog.DiscardHandler)
	reconciler := func(clk clock.Clock, leaser lifecycle.Leaser) (*lifecycle.Reconciler, error) {
		return lifecycle.New(lifecycle.Options{Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
			FenceSettle: o.FenceSettle, ClockSkew: -1, Leaser: leaser, Logger: quiet,
			OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
				return archive.Open(ctx, target, s, archive.Options{Clock: clk, Format: format, Facts: reg.Finder([]string{f.Name})})
			}})
	}

	oldest := period.Granularity{Unit: period.Day}.Of(server.Now().Add(-3 * 24 * time.Hour))
	generation := func() (int64, error) {
		es, err := reg.List(ctx, f.Name)
		var g int64
		for _, e := range es {
			if e.Ref.Period == oldest {
				g = max(g, e.Generation)
			}
		}
		return g, err
	}
	var (
		mu       sync.Mutex
		acked    = map[string]bool{}
		refused  int
		timedOut int
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		failures []error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err)
	}
	for w := range o.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 37))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				now := server.Now()
				batch := make([]event.Event, o.Batch)
				for j := range batch {
					at := now
					if rnd.IntN(10) < 3 {
						// Within the oldest day, before now less three
						// days: its table is not past retention by the
						// server's clock.
						span := min(now.Add(-3*24*time.Hour).Sub(oldest.Start), oldest.End.Sub(oldest.Start))
						at = oldest.Start.Add(time.Duration(rnd.Int64N(int64(max(span, time.Millisecond)))))
					}
					batch[j] = event.Event{ID: fmt.Sprintf("w%d-%07d-%03d", w, i, j), Time: at, Series: fmt.Sprintf("car-%d", rnd.IntN(4)),
						Fields: map[string]any{"n": json.Number(fmt.Sprint(j))}}
				}
				_, err := db.Write(ctx, "acme", "a_table", batch)
				switch {
				case err == nil:
					mu.Lock()
					for _, e := range batch {
						acked[e.ID] = true
					}
					mu.Unlock()
				case errors.Is(err, storage.ErrUnavailable):
					mu.Lock()
					refused++
					mu.Unlock()
					// A client waits before it retries (Retry-After).
					time.Sleep(10 * time.Millisecond)
				case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
					mu.Lock()
					timedOut++
					mu.Unlock()
					time.Sleep(10 * time.Millisecond)
				default:
					fail(fmt.Errorf("write: %w", err))
					return
				}
			}
		}()
	}
	// every runs r every d until the writers stop.
	every := func(r *lifecycle.Reconciler, d time.Duration) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(d)
			defer tick.Stop()
			for {
				_, err := r.Reconcile(ctx, false)
				if err != nil && !errors.Is(err, lifecycle.ErrActionsFailed) && !errors.Is(err, lifecycle.ErrLeaseHeld) {
					fail(fmt.Errorf("reconcile: %w", err))
					return
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
	}
	own, err := reconciler(server, lifecycle.TableLease{Store: s, Table: cfg.MetaTable, Clock: server})
	if err != nil {
		return Result{}, err
	}
	every(own, 150*time.Millisecond)
	for range o.Reconcilers {
		r, err := reconciler(ahead, nil)
		if err != nil {
			close(stop)
			wg.Wait()
			return Result{}, err
		}
		every(r, 100*time.Millisecond)
	}
	end := time.Now().Add(cmp.Or(o.Duration, time.Minute))
	for o.Duration == 0 && time.Now().Before(end) {
		g, err := generation()
		if err != nil {
			fail(err)
			break
		}
		if g >= o.Generations {
			end = time.Now().Add(o.RouteTTL + 500*time.Millisecond)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Until(end))
	close(stop)
	wg.Wait()
	if err := errors.Join(failures...); err != nil {
		return Result{}, err
	}

	res := Result{Acknowledged: len(acked), Refused: refused, TimedOut: timedOut}
	if res.Generations, err = generation(); err != nil {
		return Result{}, err
	}
	// A fresh server's query of the range.
	fresh, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: server, Archives: archives, ReadOnly: true})
	if err != nil {
		return Result{}, err
	}
	defer fresh.Close()
	q := engine.Query{Table: "a_table", From: oldest.Start, To: server.Now().Add(time.Minute), Limit: engine.DefaultMaxLimit}
	seen := map[string]int{}
	for {
		p, err := fresh.Query(ctx, "acme", q)
		if err != nil {
			return Result{}, err
		}
		if len(p.Gaps) > 0 {
			return Result{}, fmt.Errorf("the query names gaps: %+v", p.Gaps)
		}
		for _, e := range p.Events {
			seen[e.ID]++
		}
		if p.NextCursor == "" {
			break
		}
		q.Cursor = p.NextCursor
	}
	for id, n := range seen {
		if n > 1 {
			res.Duplicated++
		}
		if acked[id] {
			res.Answered++
		}
	}
	for id := range acked {
		if seen[id] == 0 {
			res.Lost++
		}
	}
	return res, nil
}

// aheadClock is the real clock moved by a duration, as TIMETABLE_NOW set
// to now plus that duration at each start of the CLI.
type aheadClock struct{ by time.Duration }

func (c aheadClock) Now() time.Time { return time.Now().Add(c.by).UTC() }
