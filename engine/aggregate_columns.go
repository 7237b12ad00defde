package engine

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// An aggregate over chunk tables folds chunks' columns into its buckets:
// it reads one series' items of every partition (each shard, each
// table) in sort key order, a window at a time, decodes of each chunk
// the times and the columns of the fields it sums (chunk.ReadColumnsAt),
// and adds each value in the range to its bucket's summary, with no
// event or map of fields made. A window's events are each added once:
// its chunks are folded only when they alone make the window and their
// times do not overlap (each chunk's last event before the next chunk's
// first), since an event two chunks hold has the same time in both and
// one chunk holds an event once (chunk.Pack). A window that also holds
// rows or map items, or chunks whose times overlap (two requests' events
// of one window interleaved, or one event stored twice), is decoded into
// events as a read decodes it (chunk.WindowEvents, each event once) and
// those are added. Queries the columns do not answer read events
// (columnWindow says which).
//
// What a fold costs per chunk is kept to decoding it: a chunk's sort key
// and stored form are copied from the store's buffers (Attrs' views, no
// item made) into memory the fold keeps, its time read from the key once
// (chunk.FirstTimes, which parses a window's time prefix once and a
// day once), the columns read into
// memory the fold keeps (chunk.ReadColumnsAt reuses a Columns', and
// passes over the columns of fields not asked for), folds are pooled
// between series (foldPool), a worker of an aggregate of every series
// moves its iterators from series to series (partitionIterators) and
// keeps one summariser, and a chunk's events are added a bucket's
// run at a time, a column of integers or decimals that every event has
// as one int64 sum, min and max (agg.Summary.AddDecimals) where the
// summary keeps only totals, and a column of floats through a cache of
// the floats' decimals (agg.FloatCache), which readings repeat.

// columnWindow returns the chunk window of spec's tables when an
// aggregate q reads them from columns: every table of one chunk window
// and none archived (an archive holds events), no filter (which may
// need other fields than those summed), no cursor, and none of first,
// last, delta and rate, which depend on the order of events at one
// instant: the merge's, by event id, which only events have (a chunk
// holds its events at one instant in an order of its own).
func columnWindow(spec sourceSpec, q *AggregateQuery) (time.Duration, bool) {
	if q.Filter != nil || spec.pos != nil || spec.layout == family.LayoutMap || len(spec.tables) == 0 ||
		slices.ContainsFunc(q.Funcs, orderedFunction) {
		return 0, false
	}
	window := chunkWindow(spec.tables[0])
	for _, t := range spec.tables {
		if t.archive != nil || chunkWindow(t) != window {
			return 0, false
		}
	}
	return window, window > 0
}

// orderedFunction reports whether fn depends on the order of events at
// one instant.
func orderedFunction(fn string) bool {
	switch fn {
	case FnFirst, FnLast, FnDelta, FnRate:
		return true
	}
	return false
}

// bucketOfTime returns the summary of the bucket of an aggregate that
// holds the time t (Unix nanoseconds), and the end of that bucket (Unix
// nanoseconds, not included).
type bucketOfTime func(t int64) (s *agg.Summary, end int64, err error)

// aggregateReads reads the events of one series for an aggregate q: from
// chunks' columns where columnWindow allows (foldColumns), else as a walk
// of row items or the merge of events (walkOrMerge) hand them to item
// and event. at returns the summary of the bucket of a time. its, when
// not nil, are the iterators of the series read before, which a fold
// moves to this one's partitions.
func (db *DB) aggregateReads(ctx context.Context, spec sourceSpec, series string, q *AggregateQuery, at bucketOfTime, item func(k agg.OrderKey, it storage.Iterator) error, event func(ev event.Event) error, its *partitionIterators) error {
	if window, ok := columnWindow(spec, q); ok {
		return db.foldColumns(ctx, spec, series, q, window, at, its)
	}
	return db.walkOrMerge(ctx, spec, series, q.Fields, item, event)
}

// foldColumns adds the events of one series of spec's chunk tables, of
// chunk window window, to the summaries at returns, reading its
// partitions through its (partitionIterators.query).
func (db *DB) foldColumns(ctx context.Context, spec sourceSpec, series string, q *AggregateQuery, window time.Duration, at bucketOfTime, its *partitionIterators) error {
	from, to := spec.span()
	f := foldPool.Get().(*columnFold)
	defer f.release()
	f.q, f.series, f.from, f.to, f.at = q, series, from.UnixNano(), to.UnixNano(), at
	ps := f.parts[:0]
	if its == nil {
		defer func() {
			for _, p := range ps {
				p.it.Close()
			}
		}()
	}
	low, high := its.rangeKeys(from, to, window)
	for _, t := range spec.tables {
		for shard := range t.shards {
			sq := storage.Query{Table: t.name, PK: itemenc.PartitionKey(spec.tenant, spec.q.Table, series, shard), Low: low, High: high}
			ps = f.partition(ps)
			p := ps[len(ps)-1]
			p.table, p.pk, p.scheme, p.it = t.name, sq.PK, t.entry.IDScheme(), its.query(ctx, db, t, len(ps)-1, sq)
		}
	}
	f.parts = ps
	if err := firsts(db.opts.QueryParallelism, ps, (*columnPartition).next); err != nil {
		return err
	}
	h := slices.DeleteFunc(append(f.heap[:0], ps...), func(p *columnPartition) bool { return !p.ok })
	f.heap = h
	heap.Init(&h)
	var start int64 // the window of f.items
	win := int64(window)
	for len(h) > 0 {
		p := h[0]
		if p.timed {
			w := p.at - ((p.at%win)+win)%win // windows align to the Unix epoch (chunk.WindowStart)
			if len(f.items) > 0 && w != start {
				if err := f.window(); err != nil {
					return err
				}
			}
			start = w
			f.add(p)
		}
		if err := p.next(); err != nil {
			return err
		}
		if p.ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if len(f.items) > 0 {
		return f.window()
	}
	return nil
}

// tableItem is an item of a window and the id scheme of its table: a
// chunk's keys, the time of its first event (its sort key's) and its
// stored form (chunk.AttrData), or any other item whole.
type tableItem struct {
	chunk bool
	pk    string
	sk    []byte
	first int64 // Unix nanos
	data  []byte
	item  storage.Item
	// scheme is the id scheme of the item's table.
	scheme event.IDScheme
}

// newTableItem returns the tableItem of an item read whole.
func newTableItem(it storage.Item, scheme event.IDScheme) tableItem {
	if !chunk.IsSortKey(it.SK) {
		return tableItem{pk: it.PK, sk: []byte(it.SK), item: it, scheme: scheme}
	}
	data, _ := chunk.Data(it)
	first, _ := chunk.FirstTime(it.SK)
	return tableItem{chunk: true, pk: it.PK, sk: []byte(it.SK), first: first.UnixNano(), data: data, scheme: scheme}
}

// whole returns the item as a read decodes it.
func (t *tableItem) whole() storage.Item {
	if !t.chunk {
		return t.item
	}
	return storage.Item{PK: t.pk, SK: string(t.sk), Attrs: map[string]any{chunk.AttrData: t.data}}
}

// add adds the item a partition is on to the window, in memory of the
// window's own: a chunk's sort key and stored form change hands, the
// partition taking for its next item the buffers of the item that held
// this place in a window before.
func (f *columnFold) add(p *columnPartition) {
	if len(f.items) == cap(f.items) {
		f.items = append(f.items, tableItem{})
	} else {
		f.items = f.items[:len(f.items)+1]
	}
	t := &f.items[len(f.items)-1]
	t.chunk, t.pk, t.first, t.scheme = p.chunk, p.pk, p.at, p.scheme
	t.item = p.item
	t.sk, p.sk = p.sk, t.sk[:0]
	if p.chunk {
		t.data, p.data, t.item = p.data, t.data[:0], storage.Item{}
	} else {
		t.data = t.data[:0]
	}
}

// columnFold adds one series' windows to the summaries of an aggregate.
type columnFold struct {
	q        *AggregateQuery
	series   string
	from, to int64 // the range, inclusive, Unix nanos
	at       bucketOfTime
	items    []tableItem // the window's, in sort key order
	cols     []chunk.Columns
	next     []int // per field, the index of its next value in the chunk
	evs      []itemenc.DecodedEvent
	// floats holds the decimals of the floats folded last, of every
	// series the fold served (agg.Summary.AddFloats).
	floats agg.FloatCache
	// parts are the partitions of the series, made for an earlier
	// series and emptied for this one (partition), and heap the memory
	// of their heap.
	parts []*columnPartition
	heap  columnPartitions
	// folded and decoded count the windows added from columns and from
	// events.
	folded, decoded int
}

// foldPool holds columnFolds between series and queries: an aggregate
// of many series folds each with the memory (items' stored forms,
// columns) an earlier one grew, not allocating it again per series.
var foldPool = sync.Pool{New: func() any { return &columnFold{} }}

// release returns f to foldPool, keeping its buffers' memory and its
// cache of floats' decimals, and nothing else: no item, summary or
// query.
func (f *columnFold) release() {
	for i := range f.items[:cap(f.items)] {
		t := &f.items[:cap(f.items)][i]
		*t = tableItem{sk: t.sk[:0], data: t.data[:0]}
	}
	for i := range f.cols[:cap(f.cols)] {
		c := &f.cols[:cap(f.cols)][i]
		for fi := range c.Fields[:cap(c.Fields)] {
			c.Fields[:cap(c.Fields)][fi].Values = nil
		}
	}
	clear(f.evs[:cap(f.evs)])
	for _, p := range f.parts[:cap(f.parts)] {
		if p != nil {
			p.it, p.item = nil, storage.Item{}
		}
	}
	f.parts, f.heap = f.parts[:0], f.heap[:0]
	f.q, f.series, f.from, f.to, f.at = nil, "", 0, 0, nil
	f.items, f.cols, f.next, f.evs = f.items[:0], f.cols[:0], f.next[:0], f.evs[:0]
	f.folded, f.decoded = 0, 0
	foldPool.Put(f)
}

// partition appends to ps, the fold's partitions (f.parts), one more:
// one an earlier series left, emptied, keeping the memory of its sort
// key and stored form, or a new one.
func (f *columnFold) partition(ps []*columnPartition) []*columnPartition {
	if len(ps) < cap(ps) {
		ps = ps[:len(ps)+1]
		if p := ps[len(ps)-1]; p != nil {
			*p = columnPartition{sk: p.sk[:0], data: p.data[:0], times: p.times, firsts: p.firsts, copyData: p.copyData}
			return ps
		}
	} else {
		ps = append(ps, nil)
	}
	ps[len(ps)-1] = &columnPartition{}
	return ps
}

// window adds the events of the window of f.items, and empties it.
func (f *columnFold) window() error {
	defer func() { f.items = f.items[:0] }()
	if !slices.ContainsFunc(f.items, func(t tableItem) bool { return !t.chunk }) {
		ok, err := f.readColumns()
		if err != nil {
			return err
		}
		if ok {
			f.folded++
			for i := range f.items {
				if err := f.fold(&f.cols[i]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	f.decoded++
	return f.events()
}

// readColumns reads the columns of the window's chunks and reports
// whether their times are apart: each chunk's last event before the next
// chunk's first, so that no event is in two of them.
func (f *columnFold) readColumns() (bool, error) {
	if cap(f.cols) < len(f.items) {
		f.cols = append(f.cols[:cap(f.cols)], make([]chunk.Columns, len(f.items)-cap(f.cols))...)
	}
	f.cols = f.cols[:len(f.items)]
	for i, t := range f.items {
		c := &f.cols[i]
		if err := chunk.ReadColumnsAt(c, t.first, t.data, f.q.Fields); err != nil {
			return false, fmt.Errorf("chunk %q %q: %w", t.pk, t.sk, err)
		}
		if len(c.Times) == 0 {
			return false, nil // no chunk Pack makes: let the event path judge it
		}
		if i > 0 {
			prev := f.cols[i-1].Times
			if prev[len(prev)-1] >= c.Times[0] {
				return false, nil
			}
		}
	}
	return true, nil
}

// fold adds the events of one chunk's columns that lie in the range, a
// run of events of one bucket at a time (times are in order; at says
// where a time's bucket ends): a column
// every event of the run has adds its integers and decimals as one run
// (agg.Summary.AddDecimals), any other value one by one.
func (f *columnFold) fold(c *chunk.Columns) error {
	f.next = append(f.next[:0], make([]int, len(f.q.Fields))...)
	n := len(c.Times)
	for i := 0; i < n; {
		t := c.Times[i]
		if t < f.from || t > f.to {
			f.skip(c, i)
			i++
			continue
		}
		s, end, err := f.at(t)
		if err != nil {
			return err
		}
		j := i + 1
		for j < n && c.Times[j] < end && c.Times[j] <= f.to {
			j++
		}
		s.Events += int64(j - i)
		for fi := range c.Fields {
			f.addRun(s, c, fi, i, j)
		}
		i = j
	}
	return nil
}

// skip passes over event i's values, which lie out of the range.
func (f *columnFold) skip(c *chunk.Columns, i int) {
	for fi := range c.Fields {
		if c.Fields[fi].Has(i) {
			f.next[fi]++
		}
	}
}

// addRun adds field fi's values of events i to j (not included), which
// are of s's bucket.
func (f *columnFold) addRun(s *agg.Summary, c *chunk.Columns, fi, i, j int) {
	col := &c.Fields[fi]
	name := f.q.Fields[fi]
	if col.Present == nil {
		// Every event has the field: its values are the events' own.
		switch col.Kind {
		case chunk.ColumnInts, chunk.ColumnDecimals:
			scale := 0
			if col.Kind == chunk.ColumnDecimals {
				scale = col.Scale
			}
			if s.AddDecimals(name, col.Ints[i:j], scale) {
				f.next[fi] = j
				return
			}
		case chunk.ColumnFloats:
			if s.AddFloats(name, col.Floats[i:j], c.Times[i:j], f.series, &f.floats) {
				f.next[fi] = j
				return
			}
		}
	}
	k := agg.OrderKey{Series: f.series}
	for e := i; e < j; e++ {
		if !col.Has(e) {
			continue
		}
		v := f.next[fi]
		f.next[fi]++
		k.At = c.Times[e]
		switch col.Kind {
		case chunk.ColumnInts:
			s.AddInt(name, col.Ints[v], k)
		case chunk.ColumnFloats:
			s.AddFloat(name, col.Floats[v], k)
		case chunk.ColumnDecimals:
			s.AddDecimal(name, col.Ints[v], col.Scale, k)
		default:
			s.AddValue(name, col.Values[v], k)
		}
	}
}

// events adds the events of the window's items as a read decodes them:
// each table's items together (chunk.WindowEvents, under the table's id
// scheme), then an event two tables hold once, as the merge keeps it.
func (f *columnFold) events() error {
	f.evs = f.evs[:0]
	items := make([]storage.Item, 0, len(f.items))
	for i := 0; i < len(f.items); {
		j := i + 1
		for j < len(f.items) && f.items[j].scheme == f.items[i].scheme {
			j++
		}
		items = items[:0]
		for k := range f.items[i:j] {
			items = append(items, f.items[i+k].whole())
		}
		var err error
		if f.evs, err = chunk.WindowEvents(f.evs, items, f.items[i].scheme); err != nil {
			return err
		}
		i = j
	}
	slices.SortStableFunc(f.evs, func(a, b itemenc.DecodedEvent) int { return cmp.Compare(a.SK, b.SK) })
	f.evs = slices.CompactFunc(f.evs, func(a, b itemenc.DecodedEvent) bool { return a.SK == b.SK })
	for _, d := range f.evs {
		t := d.Event.Time.UnixNano()
		if t < f.from || t > f.to {
			continue
		}
		s, _, err := f.at(t)
		if err != nil {
			return err
		}
		s.Add(d.Event, f.q.Fields)
	}
	return nil
}

// columnPartition is one partition of a fold: its iterator, and the
// item of events it is on (ok): its sort key and the time in it (at,
// Unix nanos; timed says the key holds one), and a chunk's stored form,
// in memory of its own, or any other item whole.
type columnPartition struct {
	table, pk string
	scheme    event.IDScheme
	it        storage.Iterator
	sk        []byte
	at        int64
	timed     bool
	times     itemenc.TimeKeys
	firsts    chunk.FirstTimes
	chunk     bool
	data      []byte
	item      storage.Item
	ok        bool
	// copyData, a method value made once, copies a chunk's stored form
	// from the item's attributes (Attrs) into data.
	copyData func(name string, v any) bool
}

// next moves the partition to its next item of events: a chunk, a row
// or a map item. Of a chunk it copies the sort key and the stored form
// only, as the store holds them (Attrs), not the item.
func (p *columnPartition) next() error {
	for p.it.Next() {
		sk := p.it.SortKey()
		switch {
		case chunk.IsSortKey(sk):
			p.data = p.data[:0]
			if p.copyData == nil {
				p.copyData = p.copyChunk
			}
			if err := p.it.Attrs(p.copyData); err != nil {
				return fmt.Errorf("query table %q: %w", p.table, err)
			}
			p.at, p.timed = p.firsts.Nanos(sk)
			p.sk, p.chunk, p.item, p.ok = append(p.sk[:0], sk...), true, storage.Item{}, true
			return nil
		case itemenc.IsRowSortKey(sk) || itemenc.IsMapSortKey(sk):
			p.item = p.it.Item()
			p.at, p.timed = p.times.Nanos(p.item.SK[:itemenc.TimeKeyLen])
			p.sk, p.chunk, p.ok = append(p.sk[:0], p.item.SK...), false, true
			return nil
		}
	}
	p.ok = false
	if err := p.it.Err(); err != nil && !errors.Is(err, storage.ErrTableNotFound) {
		return fmt.Errorf("query table %q: %w", p.table, err)
	}
	return nil
}

// copyChunk is an Attrs visitor that copies the chunk's stored form
// into p.data.
func (p *columnPartition) copyChunk(name string, v any) bool {
	if !chunk.IsDataAttr(name) {
		return true
	}
	if b, ok := v.([]byte); ok {
		p.data = append(p.data, b...)
	}
	return false
}

// columnPartitions is a heap of columnPartitions by sort key. It
// implements heap.Interface.
type columnPartitions []*columnPartition

func (h columnPartitions) Len() int           { return len(h) }
func (h columnPartitions) Less(i, j int) bool { return bytes.Compare(h[i].sk, h[j].sk) < 0 }
func (h columnPartitions) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *columnPartitions) Push(x any)        { *h = append(*h, x.(*columnPartition)) }
func (h *columnPartitions) Pop() any {
	c := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return c
}
