package engine

import (
	"context"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// partitionIterators keeps, for one worker of an aggregate of every
// series, the iterators of the partitions of the series it read last,
// by their place among the query's partitions (each table's shards in
// turn), and moves them to the same partitions of its next series
// (storage.Requerier) in place of querying anew: on Pebble a new
// iterator takes the database's state and builds a merge of its
// memtables and levels, which the series of a day's aggregate would pay
// for thousands of times. An iterator whose store cannot move it
// (DynamoDB's) is closed and the partition queried anew. A moved
// iterator reads the snapshot of its first query (the worker's first
// series): the aggregate reads what was stored when the worker started,
// as a Query reads what was stored when it was made. An iterator is
// moved without the query's Eventual, which a snapshot has no use for.
type partitionIterators struct {
	its []storage.Iterator
	// low and high are the sort keys of a fold's range (rangeKeys),
	// for the range and window they were made for.
	low, high  string
	from, to   time.Time
	window     time.Duration
	keysFolded bool
}

// rangeKeys returns the sort keys that bound a fold of the range from
// to to in chunk windows window: chunk.LowKey and itemenc.HighKey's,
// made once for the series of an aggregate, which share its range.
func (r *partitionIterators) rangeKeys(from, to time.Time, window time.Duration) (low, high string) {
	if r == nil {
		return chunk.LowKey(from, window), itemenc.HighKey(to)
	}
	if !r.keysFolded || !r.from.Equal(from) || !r.to.Equal(to) || r.window != window {
		r.low, r.high = chunk.LowKey(from, window), itemenc.HighKey(to)
		r.from, r.to, r.window, r.keysFolded = from, to, window, true
	}
	return r.low, r.high
}

// query returns an iterator of q, partition i of a series of spec's
// tables, table t's: the one partition i of the series before had,
// moved, or a new one. The iterators keep it: the caller does not close
// it (close does). A nil partitionIterators queries anew, and the caller
// closes what it returns.
func (r *partitionIterators) query(ctx context.Context, db *DB, t physTable, i int, q storage.Query) storage.Iterator {
	if r == nil {
		return db.itemsOf(t).Query(ctx, q)
	}
	if i < len(r.its) && r.its[i] != nil {
		if rq, ok := r.its[i].(storage.Requerier); ok && rq.Requery(ctx, q) {
			return r.its[i]
		}
		r.its[i].Close() // its error, if any, was the last series'
		r.its[i] = nil
	}
	for len(r.its) <= i {
		r.its = append(r.its, nil)
	}
	r.its[i] = db.itemsOf(t).Query(ctx, q)
	return r.its[i]
}

// close closes the iterators.
func (r *partitionIterators) close() {
	for i, it := range r.its {
		if it != nil {
			it.Close()
		}
		r.its[i] = nil
	}
	r.its = r.its[:0]
}
