package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// Reading every series of a logical table.
//
// A table keeps each series' shard in a partition of its own, in time
// order, and nothing orders events across partitions: DynamoDB hashes
// partition keys, and a time-ordered scan of a whole table would need an
// index of every event. So a read of every series reads every partition,
// and holds memory for each one that it keeps open. Both kinds of read
// keep that to a small constant per partition:
//
//   - a page of every series (a query, which has a limit) keeps only the
//     limit+1 series whose first events come first. It walks the series
//     indexes in order, reads each series' first event (a page of one
//     item), and keeps the series in a heap bounded by limit+1 whose top
//     is the last kept: a series that comes after it is let go at once.
//     No event of a series let go can be on the page, since limit+1
//     other series' first events all come before its first. Only the
//     kept series are merged, their pages growing as the merge needs.
//   - a merge of every event (an aggregate, which has no limit) must hold
//     every partition at once. Its pages start at one item and grow only
//     up to a share of mergeItems, so the whole merge holds at most
//     about mergeItems events or one per partition, whichever is more.
//
// Both take their partitions from the query budget first (read_budget.go).

// mergeItems bounds the events that a merge of every event of every
// series keeps in its partitions' pages, once it has more partitions
// than that: then each page is one item.
const mergeItems = 1 << 16

// firstPage is the size of a partition's first page in a read of every
// series: one item, its first event. A partition read per millisecond
// reads one item past a millisecond to know the millisecond is whole, so
// two.
func firstPage(perMillisecond bool) int {
	if perMillisecond {
		return 2
	}
	return 1
}

// mergeFirstOfEverySeries returns the merge of the limit+1 series whose
// first events come first: all that a page of limit events of every
// series, and the sign that more follow, can hold.
func (db *DB) mergeFirstOfEverySeries(r *fanOut, tables []physTable, limit int) (*merger, error) {
	// Each series being read and each kept holds a partition per shard
	// of every table.
	shards := 0
	for _, t := range tables {
		shards += t.shards
	}
	probes := db.opts.QueryParallelism
	release, err := db.budget.reserve(r.ctx, r.tenant, int64((probes+limit+1)*shards))
	if err != nil {
		return nil, err
	}
	kept := &candidates{desc: r.q.Desc, keep: limit + 1}
	p := pageSizes{first: firstPage(r.perMillisecond), max: sourceLimit(limit), whole: true}
	var mu sync.Mutex
	work := make(chan seriesIn)
	g, gctx := errgroup.WithContext(r.ctx)
	g.Go(func() error {
		defer close(work)
		err := db.walkSeries(gctx, r.tenant, r.q.Table, tables, func(s seriesIn) bool {
			select {
			case work <- s:
				return true
			case <-gctx.Done():
				return false
			}
		})
		if err == nil {
			// A walk cut short must not pass for a whole one.
			err = gctx.Err()
		}
		return err
	})
	for range probes {
		g.Go(func() error {
			for s := range work {
				h, err := r.candidate(s, p)
				if err != nil {
					return err
				}
				if h == nil {
					continue // no event in range
				}
				mu.Lock()
				out := kept.offer(h)
				mu.Unlock()
				if out != nil {
					out.close()
				}
			}
			return nil
		})
	}
	err = g.Wait()
	var sources []*source
	for _, h := range kept.h {
		sources = append(sources, h.sources...)
	}
	m := &merger{desc: r.q.Desc, sources: sources, release: release}
	if err != nil {
		m.close()
		return nil, err
	}
	// The page needs limit+1 events of the kept partitions: each is
	// expected to give its share.
	for _, s := range sources {
		s.expect((limit + len(sources)) / len(sources))
	}
	m.heap = append(m.heap, sources...)
	heap.Init(m)
	return m, nil
}

// mergeEverySeries returns the merge of every partition of every series,
// in pages that start at one item and grow up to a share of mergeItems.
func (db *DB) mergeEverySeries(r *fanOut, tables []physTable) (*merger, error) {
	series := make([][]string, len(tables))
	g, gctx := errgroup.WithContext(r.ctx)
	g.SetLimit(db.opts.QueryParallelism)
	for i, t := range tables {
		g.Go(func() error {
			s, err := listSeries(gctx, db.itemsOf(t), t.name, r.tenant, r.q.Table)
			if errors.Is(err, storage.ErrTableNotFound) {
				// Deleted since the catalog was read: it holds nothing
				// any more.
				db.forgetTable(t)
				return nil
			}
			series[i] = s
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	n := 0
	for i, t := range tables {
		n += len(series[i]) * t.shards
	}
	release, err := db.budget.reserve(r.ctx, r.tenant, int64(n))
	if err != nil {
		return nil, err
	}
	p := pageSizes{first: firstPage(r.perMillisecond), max: mergeItems / max(n, 1), whole: true}
	sources := make([]*source, 0, n)
	for i, t := range tables {
		for _, s := range series[i] {
			for shard := range t.shards {
				sources = append(sources, r.source(t, s, shard, p))
			}
		}
	}
	return db.start(r, sources, release)
}

// seriesIn is a series and the tables whose indexes hold it.
type seriesIn struct {
	series string
	tables []*physTable
}

// walkSeries calls fn with every series that the tables' series indexes
// hold, once each, in order, until fn returns false. It reads the indexes
// side by side as it goes, so its memory does not grow with the number of
// series.
func (db *DB) walkSeries(ctx context.Context, tenant, table string, tables []physTable, fn func(seriesIn) bool) error {
	type index struct {
		t   *physTable
		it  storage.Iterator
		cur string // the series the index is at
		ok  bool
	}
	// next moves an index to its next series.
	next := func(x *index) error {
		for x.it.Next() {
			if s, ok := strings.CutPrefix(x.it.Item().SK, itemenc.SeriesIndexPrefix); ok {
				x.cur = s
				return nil
			}
		}
		x.ok = false
		err := x.it.Close()
		if errors.Is(err, storage.ErrTableNotFound) {
			// Deleted since the catalog was read: it holds nothing any
			// more.
			db.forgetTable(*x.t)
			return nil
		}
		if err != nil {
			return fmt.Errorf("read series index of %q: %w", x.t.name, err)
		}
		return nil
	}
	indexes := make([]*index, len(tables))
	defer func() {
		for _, x := range indexes {
			if x != nil {
				x.it.Close()
			}
		}
	}()
	for i := range tables {
		// The keys are all an index entry holds.
		x := &index{t: &tables[i], it: db.itemsOf(tables[i]).Query(ctx, storage.Query{Table: tables[i].name, PK: itemenc.SeriesIndexKey(tenant, table), Attrs: []string{}}), ok: true}
		indexes[i] = x
		if err := next(x); err != nil {
			return err
		}
	}
	for {
		s := seriesIn{}
		for _, x := range indexes {
			switch {
			case !x.ok:
			case s.tables == nil || x.cur < s.series:
				s = seriesIn{series: x.cur, tables: []*physTable{x.t}}
			case x.cur == s.series:
				s.tables = append(s.tables, x.t)
			}
		}
		if s.tables == nil {
			return nil
		}
		for _, x := range indexes {
			if x.ok && x.cur == s.series {
				if err := next(x); err != nil {
					return err
				}
			}
		}
		if !fn(s) {
			return nil
		}
	}
}

// candidate is a series in the running for a page of every series: its
// partitions that hold events in range, each at its first one, and the
// one of them whose event comes first.
type candidate struct {
	series  string
	sources []*source
	first   *source
}

// candidate reads the first event of every partition of a series, and returns
// nil when none has an event in range.
func (r *fanOut) candidate(s seriesIn, p pageSizes) (*candidate, error) {
	h := &candidate{series: s.series}
	for _, t := range s.tables {
		for shard := range t.shards {
			src := r.source(*t, s.series, shard, p)
			if err := src.advance(); err != nil {
				h.close()
				return nil, err
			}
			if !src.ok {
				continue
			}
			h.sources = append(h.sources, src)
			if h.first == nil || before(src, h.first, r.q.Desc) {
				h.first = src
			}
		}
	}
	if h.first == nil {
		return nil, nil
	}
	return h, nil
}

// close lets the series' iterators go.
func (h *candidate) close() {
	for _, s := range h.sources {
		s.close()
	}
}

// before reports whether a's current event comes before b's in the
// order of a merge.
func before(a, b *source, desc bool) bool {
	c := compareSources(a, b)
	if desc {
		return c > 0
	}
	return c < 0
}

// candidates keeps the keep series, of those offered, whose first events come
// first. It is a heap (heap.Interface) with the last of them on top.
type candidates struct {
	desc bool
	keep int
	h    []*candidate
}

func (hs *candidates) Len() int           { return len(hs.h) }
func (hs *candidates) Swap(i, j int)      { hs.h[i], hs.h[j] = hs.h[j], hs.h[i] }
func (hs *candidates) Less(i, j int) bool { return before(hs.h[j].first, hs.h[i].first, hs.desc) }
func (hs *candidates) Push(x any)         { hs.h = append(hs.h, x.(*candidate)) }
func (hs *candidates) Pop() any {
	h := hs.h[len(hs.h)-1]
	hs.h = hs.h[:len(hs.h)-1]
	return h
}

// offer keeps h if it is among the first keep series offered so far, and
// returns the series this leaves out, h or another, or nil.
func (hs *candidates) offer(h *candidate) *candidate {
	if len(hs.h) < hs.keep {
		heap.Push(hs, h)
		return nil
	}
	if !before(h.first, hs.h[0].first, hs.desc) {
		return h
	}
	out := hs.h[0]
	hs.h[0] = h
	heap.Fix(hs, 0)
	return out
}
