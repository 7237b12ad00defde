package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// A walk reads one series' events for an aggregate straight from the
// stored items: it merges the series' partitions (every shard, in every
// table) by sort key, which is time order, and hands each event's item to
// its caller positioned in its iterator, whose Attrs visit the fields in
// the store's own buffers. No event, map of fields or copy of a value is
// made: an aggregate adds each value to its summary at once (addItem).
// Reads that return events, and series whose partitions hold map-layout
// items, go through openSources and its merge of events instead.

// errNotRows stops a walk that met a map-layout item, which holds the
// events of a millisecond in maps a walk does not read: the caller reads
// the rest of the series through openSources (walkOrMerge).
var errNotRows = errors.New("engine: the series holds map-layout items")

// walk calls fn with every event of series in spec's tables and range, in
// time order, each once (an event a retry stored in two tables is read
// from one), matching spec's filter: its order key, whose id is valid
// only during the call, and the iterator positioned on its item, whose
// Attrs are its fields among fields. It returns errNotRows when the
// series' partitions hold map-layout items, with the position of the
// last event it passed to fn, if any: the merge of events goes on after
// it.
func (db *DB) walk(ctx context.Context, spec sourceSpec, series string, fields []string, fn func(k agg.OrderKey, it storage.Iterator) error) (*position, error) {
	r := db.newFanOut(ctx, spec)
	if r.perMillisecond || slices.ContainsFunc(spec.tables, func(t physTable) bool { return chunkWindow(t) > 0 }) {
		// Chunks are read through the merge of events, a window at a
		// time (read_chunk.go).
		return nil, errNotRows
	}
	attrs := append([]string{}, fields...)
	attrs = slices.DeleteFunc(attrs, itemenc.OwnAttribute)
	var cs walkPartitions
	defer func() {
		for _, c := range cs {
			c.it.Close()
		}
	}()
	for _, t := range spec.tables {
		for shard := range t.shards {
			q := storage.Query{Table: t.name, PK: itemenc.PartitionKey(spec.tenant, spec.q.Table, series, shard), Low: r.low, High: r.high, Attrs: attrs, Filter: r.pushed}
			cs = append(cs, &walkPartition{table: t.name, it: db.itemsOf(t).Query(ctx, q)})
		}
	}
	// A map item met after some events ends the walk at the last of them.
	var last []byte // the sort key of the last event, once one was
	stopped := func(err error) (*position, error) {
		if !errors.Is(err, errNotRows) || last == nil {
			return nil, err
		}
		t, id, perr := itemenc.ParseSortKey(string(last))
		if perr != nil {
			return nil, perr // a key the walk read as an event's
		}
		return &position{time: t, id: id, series: series}, err
	}
	if err := firsts(db.opts.QueryParallelism, cs, (*walkPartition).next); err != nil {
		return stopped(err)
	}
	h := slices.DeleteFunc(slices.Clone(cs), func(c *walkPartition) bool { return c.sk == "" })
	heap.Init(&h)
	var times itemenc.TimeKeys
	for len(h) > 0 {
		c := h[0]
		if last == nil || string(last) != c.sk {
			if at, ok := times.Nanos(c.sk[:itemenc.TimeKeyLen]); ok {
				last = append(last[:0], c.sk...)
				if err := fn(agg.OrderKey{At: at, ID: c.sk[itemenc.TimeKeyLen+1:], Series: series}, c.it); err != nil {
					return nil, err
				}
			}
		}
		if err := c.next(); err != nil {
			return stopped(err)
		}
		if c.sk != "" {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil, nil
}

// walkOrMerge reads the events of spec's one series (series) for an
// aggregate: as a walk hands them to item, and, from where a walk stops
// at map-layout items, as the merge of events hands them to event.
func (db *DB) walkOrMerge(ctx context.Context, spec sourceSpec, series string, fields []string, item func(k agg.OrderKey, it storage.Iterator) error, event func(ev event.Event) error) error {
	after, err := db.walk(ctx, spec, series, fields, item)
	if !errors.Is(err, errNotRows) {
		return err
	}
	spec.pos, spec.only = after, &series
	return db.eachEvent(ctx, spec, event)
}

// walkPartition is one partition of a walk: its iterator, and the sort
// key of the event item it is positioned on, "" once it has no more.
type walkPartition struct {
	table string
	it    storage.Iterator
	sk    string // in the store's buffers until the iterator moves
}

// next moves the partition to its next event item, skipping any other.
func (c *walkPartition) next() error {
	for c.it.Next() {
		sk := c.it.SortKey()
		if itemenc.IsMapSortKey(sk) || chunk.IsSortKey(sk) {
			c.sk = ""
			return errNotRows
		}
		if itemenc.IsRowSortKey(sk) {
			c.sk = sk
			return nil
		}
	}
	c.sk = ""
	if err := c.it.Err(); err != nil && !errors.Is(err, storage.ErrTableNotFound) {
		return fmt.Errorf("query table %q: %w", c.table, err)
	}
	return nil
}

// walkPartitions is a heap of walkPartitions by sort key. It implements
// heap.Interface.
type walkPartitions []*walkPartition

func (h walkPartitions) Len() int           { return len(h) }
func (h walkPartitions) Less(i, j int) bool { return h[i].sk < h[j].sk }
func (h walkPartitions) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *walkPartitions) Push(x any)        { *h = append(*h, x.(*walkPartition)) }
func (h *walkPartitions) Pop() any {
	c := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return c
}
