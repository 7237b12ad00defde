package pebblestore

import "github.com/cockroachdb/pebble/v2"

// deleteCleaner deletes the files Pebble no longer needs, write-ahead
// logs included, where Pebble's default cleaner keeps up to
// MemTableStopWritesThreshold + 1 (three) obsolete logs to write the next
// logs over (log recycling). A recycled log spares the file system a
// metadata sync when a new log starts, which a store that starts a new
// log with every memtable (up to 64 MiB, DefaultMemTableSize) pays
// rarely; but the logs kept are disk for nothing while they wait, and in a
// store that has stopped receiving they wait for good: after an idle
// flush and after `timetable compact` they were most of a small store's
// directory (3 MiB of logs beside 1 MiB of sstables, for the disk
// benchmark's 100,000 events in chunks; docs/benchmarks.md).
//
// Pebble recycles no log when its cleaner needs the contents of the
// files it cleans (it then hands every obsolete log to the cleaner): the
// cleaner has base.NeedsFileContents' unexported method, which
// pebble.ArchiveCleaner has. deleteCleaner takes that method from an
// ArchiveCleaner embedded one level down, and Clean and String from a
// DeleteCleaner embedded at the top, which win: it deletes, as Pebble's
// default does. TestNoRecycledLogs holds the contract.
type deleteCleaner struct {
	pebble.DeleteCleaner
	needsFileContents
}

// needsFileContents carries ArchiveCleaner's methods one level below
// deleteCleaner's DeleteCleaner, so that only its unexported marker
// method reaches deleteCleaner.
type needsFileContents struct{ pebble.ArchiveCleaner }

var _ pebble.Cleaner = deleteCleaner{}
