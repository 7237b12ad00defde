package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// ArchiveReader reads the tables that were archived and deleted, from
// their archives: package archive's Reader, in Parquet. A query or an
// aggregate whose range reaches such a table (its registry entry is
// deleted, with an archive target, or lists the archives of earlier
// generations of its table, registry.Entry.PastArchives) reads that
// period through the archive reader, every generation archived, merged
// in time order with the live tables under the same cursors, filters,
// aggregates and limits.
type ArchiveReader interface {
	// Query answers a storage query of a partition, or of the series
	// index, of the given generation of an archived table (of shards
	// shards) as the table answered it before it was deleted, from its
	// archive in target: as row items, whatever the table's layout, an
	// event two items held (two chunks) returned once.
	Query(ctx context.Context, target, table string, generation int64, shards int, q storage.Query) storage.Iterator
}

// Gap is a part of a query's range whose events are gone: the table that
// held them was deleted with no archive the engine can read (no archive
// target, no archive reader, or a table found deleted behind timetable's
// back). A page over a gap is not empty for want of events.
type Gap struct {
	// From and To are the part of the range the table covered.
	From, To time.Time
	// Table is the physical table that held the events.
	Table string
	// Reason says why they cannot be read.
	Reason string
}

// itemQuerier is what a read needs of a table's items: the store for a
// live table, the archive reader for an archived one.
type itemQuerier interface {
	Query(ctx context.Context, q storage.Query) storage.Iterator
}

// archiveRef is where an archived table's events are read from.
type archiveRef struct {
	target     string
	generation int64
}

// archiveItems reads an archived table through the archive reader.
type archiveItems struct {
	reader ArchiveReader
	t      physTable
}

func (c archiveItems) Query(ctx context.Context, q storage.Query) storage.Iterator {
	return c.reader.Query(ctx, c.t.archive.target, c.t.name, c.t.archive.generation, c.t.shards, q)
}

// archivedRows reports whether a table is read through the archive
// reader, which answers a partition of a table of any layout with row
// items, an event's repeats (two chunks holding it) kept once
// (ArchiveReader.Query): its partitions are read as the row layout's, a
// page of as many events as the merge expects, not a chunk window at a
// time from pages that start at one item, each of which would cost the
// reader the row groups it decodes.
func archivedRows(t physTable) bool { return t.archive != nil }

// itemsOf returns where a table's items are read from: the archive reader for
// an archived table, the store otherwise, eventually consistent for a
// table that takes no more writes (registry.Entry.Settled), strongly
// consistent for one that may still be written.
func (db *DB) itemsOf(t physTable) itemQuerier {
	if t.archive != nil && db.opts.Archives != nil {
		return archiveItems{reader: db.opts.Archives, t: t}
	}
	if t.entry.Name != "" && t.entry.Settled(db.opts.Clock.Now()) {
		return settledItems{db.store}
	}
	return db.store
}

// settledItems reads a table that takes no more writes, where an
// eventually consistent read returns what a strongly consistent one would
// at half the read units on DynamoDB.
type settledItems struct {
	store itemQuerier
}

func (s settledItems) Query(ctx context.Context, q storage.Query) storage.Iterator {
	q.Eventual = true
	return s.store.Query(ctx, q)
}

// archivedTable returns the archived table of an entry whose table was
// archived and deleted, when the engine has an archive reader (readsArchives);
// otherwise, when the table is gone, the gap it leaves.
func archivedTable(e registry.Entry, readsArchives bool) (physTable, *Gap, bool) {
	switch {
	case e.State.Live():
		return physTable{}, nil, false
	case (e.State == registry.Deleted || e.State == registry.Missing) && e.ArchiveTarget != "" && readsArchives:
		// An entry records its target once the archive is verified;
		// a table found gone after that still has it to read.
		t := tableOf(e)
		t.archive = &archiveRef{target: e.ArchiveTarget, generation: max(e.Generation, 1)}
		return t, nil, true
	}
	g := &Gap{From: e.Ref.Period.Start, To: e.Ref.Period.End, Table: e.Name}
	switch {
	case e.State == registry.Missing:
		g.Reason = "the table was found deleted outside timetable"
	case e.ArchiveTarget == "":
		g.Reason = "the table was deleted without an archive"
	default:
		g.Reason = "the table was archived to " + e.ArchiveTarget + " and deleted, and this server reads no archives"
	}
	return physTable{}, g, false
}

// pastTables returns the archived tables of the earlier generations of an
// entry's table that were archived and deleted (registry.Entry.
// PastArchives), when the engine has an archive reader; otherwise the gaps
// they leave. A restored table holds the events of every generation
// (archive.Archiver.Restore), so it has none.
func pastTables(e registry.Entry, readsArchives bool) ([]physTable, []Gap) {
	if e.State == registry.Restored {
		return nil, nil
	}
	var ts []physTable
	var gaps []Gap
	for _, a := range e.PastArchives {
		if !readsArchives {
			gaps = append(gaps, Gap{From: e.Ref.Period.Start, To: e.Ref.Period.End, Table: e.Name,
				Reason: fmt.Sprintf("generation %d of the table was archived to %s and deleted, and this server reads no archives", a.Generation, a.Target)})
			continue
		}
		t := tableOf(e)
		// Kept under the name of the table it was archived from: a
		// table a compaction had rewritten is not e's (PastArchive.Physical).
		t.name = a.TableName(e.Name)
		t.archive = &archiveRef{target: a.Target, generation: max(a.Generation, 1)}
		ts = append(ts, t)
	}
	return ts, gaps
}

// clipGaps cuts gaps to [from, to].
func clipGaps(gaps []Gap, from, to time.Time) []Gap {
	for i := range gaps {
		if gaps[i].From.Before(from) {
			gaps[i].From = from
		}
		if gaps[i].To.After(to) {
			gaps[i].To = to
		}
	}
	return gaps
}
