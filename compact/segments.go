package compact

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// The parallel scan of a rewrite (package documentation, "Parallel
// scan").
const (
	// SegmentBytes is the size of table a rewrite's scan gives a segment
	// of its own: the DynamoDB Developer Guide's rule of thumb for a
	// parallel scan's TotalSegments, one segment per 2 GB.
	SegmentBytes = 2 << 30
	// MaxSegments is the most segments a rewrite's scan is divided into,
	// whatever the table's size: each segment's checkpoint is saved on
	// the registry entry (a few hundred bytes each, within an item's 400
	// KB), and more segments than Options.Concurrency only wait their
	// turn.
	MaxSegments = 64
	// DefaultConcurrency is how many segments a rewrite scans at once
	// when Options.Concurrency is zero.
	DefaultConcurrency = 4
)

// SegmentsFor returns how many segments a rewrite's scan of a table of
// size bytes (the store's estimate, storage.TableInfo.SizeBytes; zero or
// less when it has none) is divided into: one per SegmentBytes, at least
// 1, at most MaxSegments.
func SegmentsFor(size int64) int {
	if size <= 0 {
		return 1
	}
	return int(min((size+SegmentBytes-1)/SegmentBytes, MaxSegments))
}

// segments returns how many segments the copy's scan of the entry's
// table is divided into: Options.Segments, or by the table's size.
func (rw *rewriter) segments(ctx context.Context) (int, error) {
	if rw.opts.Segments > 0 {
		return min(rw.opts.Segments, MaxSegments), nil
	}
	info, err := rw.st.DescribeTable(ctx, rw.e.TableName())
	if err != nil {
		return 0, fmt.Errorf("describe table %q: %w", rw.e.TableName(), err)
	}
	return SegmentsFor(info.SizeBytes), nil
}

// startSegments returns the checkpoints of n segments at their start;
// a single segment resumes after after with sum read (a rewrite saved
// before scans were parallel).
func startSegments(n int, after storage.Key, sum registry.RewriteSum) []registry.RewriteSegment {
	segs := make([]registry.RewriteSegment, n)
	if n == 1 {
		segs[0] = registry.RewriteSegment{After: after, Sum: sum}
	}
	return segs
}

// total returns what every segment read, together.
func total(segs []registry.RewriteSegment) registry.RewriteSum {
	var all sums
	for _, s := range segs {
		part, err := openSums(s.Sum)
		if err != nil {
			// Every part was made by sums.sum, or read by openSums
			// when its segment resumed.
			panic(fmt.Sprintf("compact: %v", err))
		}
		all.events.Merge(part.events)
		all.items.Merge(part.items)
	}
	return all.sum()
}

// segmentRun is one segment's walk in a step's scan: its walker, what it
// read, and what it did.
type segmentRun struct {
	w    *walker
	sums *sums
	res  Result
}

// scan runs one step's scan of table, segment by segment as the entry's
// Rewrite.Segments record them, Options.Concurrency segments at once, each
// from its checkpoint; a segment done is not scanned again. setup sets a
// segment's group and other functions, which add to its sums and result.
// With write, each segment's items are written to the new table before
// each of its checkpoints. A checkpoint saves, with the entry, the
// segment's key and sums as of its last write; the other segments' stay
// as of theirs. The first segment to fail stops the others (an error
// wrapping ErrStopped, at the deadline, stops no other: each stops at it
// by itself); no segment starts after one stopped.
func (rw *rewriter) scan(ctx context.Context, table string, eventual, write bool, setup func(s *segmentRun)) error {
	r := rw.e.Rewrite
	n := len(r.Segments)
	run := segmentScan{table: table, into: r.Table, total: n, window: rw.e.ChunkWindow(), eventual: eventual, write: write}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	todo := make(chan int, n)
	for i, s := range r.Segments {
		if !s.Done {
			todo <- i
		}
	}
	close(todo)
	var stopped atomic.Bool
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range min(rw.opts.Concurrency, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				if stopped.Load() || ctx.Err() != nil {
					return
				}
				err := rw.scanSegment(ctx, run, i, setup)
				if err == nil {
					continue
				}
				errs[i] = err
				stopped.Store(true)
				if !errors.Is(err, ErrStopped) {
					cancel(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, s := range rw.e.Rewrite.Segments {
		if !s.Done {
			// A segment not started because another stopped, or
			// the caller's context ended.
			if err := context.Cause(ctx); err != nil {
				return err
			}
			return ErrStopped
		}
	}
	return nil
}

// segmentScan is what every segment of a step's scan shares: the table
// scanned, the new table (written to when write), the number of segments,
// the entry's chunk window and the reads' consistency.
type segmentScan struct {
	table, into string
	total       int
	window      time.Duration
	eventual    bool
	write       bool
}

// scanSegment walks segment i of the step's scan from its checkpoint.
func (rw *rewriter) scanSegment(ctx context.Context, run segmentScan, i int, setup func(s *segmentRun)) error {
	rw.mu.Lock()
	cp := rw.e.Rewrite.Segments[i]
	rw.mu.Unlock()
	sums, err := openSums(cp.Sum)
	if err != nil {
		return err
	}
	n := run.total
	s := &segmentRun{sums: sums}
	s.w = &walker{ctx: ctx, st: rw.st, table: run.table, seg: storage.Segment{Index: i, Total: n}, window: run.window, eventual: run.eventual, opts: rw.opts}
	if run.write {
		s.w.out = &batch{st: rw.st, table: run.into}
	}
	setup(s)
	s.w.checkpoint = func(ctx context.Context, after storage.Key, done bool) error {
		rw.mu.Lock()
		defer rw.mu.Unlock()
		// The save replaces rw.e, and with it Rewrite: the segment
		// writes into the entry's Rewrite as it is now.
		rw.e.Rewrite.Segments[i] = registry.RewriteSegment{After: after, Sum: s.sums.sum(), Done: done}
		return rw.save(ctx)
	}
	err = s.w.run(cp.After)
	rw.mu.Lock()
	rw.res.add(s.res)
	rw.mu.Unlock()
	if err != nil {
		return fmt.Errorf("segment %d of %d: %w", i, n, err)
	}
	return nil
}

// add adds what a segment of a rewrite did to r.
func (r *Result) add(o Result) {
	r.Groups += o.Groups
	r.Packed += o.Packed
	r.Read += o.Read
	r.Written += o.Written
}
