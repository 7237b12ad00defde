package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/timetabledb/timetable/clock"
)

// Options configures a Store. The zero value is the default for every
// field; a negative CacheSize, MemTableSize or WALPreallocateSize is an
// error (Validate).
type Options struct {
	// FS is the file system the DB lives on; nil means the operating
	// system's. vfs.NewMem() gives an in-memory store for examples and
	// tests.
	FS vfs.FS

	// CacheSize is the size in bytes of Pebble's block cache; 0 means
	// DefaultCacheSize.
	CacheSize int64

	// MemTableSize is the most bytes one of Pebble's memtables grows to
	// (from 256 KiB, doubling with each new memtable); 0 means
	// DefaultMemTableSize. Writes stall when two are full and unflushed.
	MemTableSize int64

	// WALPreallocateSize is the most disk a write-ahead log reserves ahead
	// of what it holds; 0 means DefaultWALPreallocateSize. Pebble would
	// reserve 110% of MemTableSize for every log (reserveFS says why
	// that is too much).
	WALPreallocateSize int64

	// IdleFlush is how long writes must have stopped for the store to
	// flush its memtable to an sstable and compact what the flushes wrote,
	// so that an idle store's data is sstables compressed as compacted
	// data are rather than write-ahead log (idleflush.go,
	// idlecompact.go): the flush comes between one and two of these
	// after the last write. 0 means DefaultIdleFlush; a negative duration
	// turns both off.
	IdleFlush time.Duration

	// Clock stamps the creation time of tables; nil means the wall clock.
	Clock clock.Clock

	// Logger receives Pebble's messages and the store's own: Pebble's
	// informational messages at Debug level, its errors at Error level.
	// nil means slog.Default().
	Logger *slog.Logger
}

// DefaultCacheSize is the block cache size when Options.CacheSize is 0:
// 128 MiB rather than Pebble's 32 MiB, a bound the cache fills only with
// blocks reads ask for. The cache holds blocks uncompressed, and with
// Zstandard on the bottom levels a block read from a file costs a
// decompression: a smaller cache let queries of random series and hours
// evict each other's blocks and spend much of the server's CPU
// decompressing them again.
//
// Pebble counts its memtables against the cache, so after an ingest
// two full memtables leave it fewer blocks than its size. A cache sized
// beside them (CacheSize plus the memtables) was measured and not kept:
// it sped up the all-series aggregate but made another tenant's latest-10
// p99 during reads of every series much worse, for a cause not found.
// docs/benchmarks.md has the figures of the current defaults.
const DefaultCacheSize = 128 << 20

// DefaultMemTableSize is the memtable size when Options.MemTableSize is
// 0: 64 MiB, where Pebble's default is 4 MiB. Events arrive in time order
// within a series but spread over every series of a table, so each
// memtable flush writes an L0 table overlapping the ones before, which
// compactions rewrite again and again; larger memtables flush fewer,
// larger tables, which saves most of the ingest's compaction CPU for some
// more peak memory (docs/benchmarks.md, the ingest and peer figures). A
// store that receives little never grows its memtables that far.
const DefaultMemTableSize = 64 << 20

// DefaultWALPreallocateSize is the write-ahead log reservation when
// Options.WALPreallocateSize is 0: 4 MiB, where Pebble reserves 110% of
// the memtable size (70 MiB at DefaultMemTableSize) for each log, and a
// store has a log for each memtable not yet flushed (obsolete ones are
// deleted: cleaner.go). A store's logs then take on disk about what they
// hold: a few memtables' worth at most, under a steady ingest
// (MemTableSize bounds that), and a few MiB in a store that receives
// little. Ingest ran as fast with it as with Pebble's reservation
// (BenchmarkBatchWrite).
const DefaultWALPreallocateSize = 4 << 20

// DefaultIdleFlush is the idle time before a flush when
// Options.IdleFlush is 0: a few seconds, so that a store that has stopped
// receiving is on disk as sstables soon after, while a steady ingest,
// which writes far more often, never flushes for it. InfluxDB snapshots
// its cache after 10 minutes without writes by default; its log costs it
// less disk than Pebble's (it deletes its segments after a snapshot), so
// a Pebble store that waited as long would hold the log longer for no
// gain: a flush costs one sstable write.
const DefaultIdleFlush = 5 * time.Second

// errInvalidOptions marks an Options that Open refuses.
var errInvalidOptions = errors.New("timetable: pebble: invalid options")

// EnsureDefaults sets every zero field to its default.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.WALPreallocateSize == 0 {
		o.WALPreallocateSize = DefaultWALPreallocateSize
	}
	if o.IdleFlush == 0 {
		o.IdleFlush = DefaultIdleFlush
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports what is wrong with o.
func (o *Options) Validate() error {
	if o.CacheSize < 0 {
		return fmt.Errorf("%w: negative CacheSize %d", errInvalidOptions, o.CacheSize)
	}
	if o.MemTableSize < 0 {
		return fmt.Errorf("%w: negative MemTableSize %d", errInvalidOptions, o.MemTableSize)
	}
	if o.WALPreallocateSize < 0 {
		return fmt.Errorf("%w: negative WALPreallocateSize %d", errInvalidOptions, o.WALPreallocateSize)
	}
	return nil
}

// pebbleOptions returns the Pebble options a store with options o opens
// its DB with (o has its defaults set). The caller owns the returned cache
// reference and must Unref it once the DB is open. The benchmarks open
// their raw Pebble baseline with these same options.
func pebbleOptions(o Options) (*pebble.Options, func()) {
	cache := pebble.NewCache(o.CacheSize)
	po := &pebble.Options{
		FS:           reserveFS{FS: o.FS, max: o.WALPreallocateSize},
		Cache:        cache,
		MemTableSize: uint64(o.MemTableSize),
		Logger:       pebbleLogger{o.Logger},
		// Delete obsolete write-ahead logs rather than keep some for reuse
		// (cleaner.go).
		Cleaner: deleteCleaner{},
		// Pin the on-disk format rather than take whatever default a
		// Pebble upgrade brings.
		FormatMajorVersion: pebble.FormatNewest,
	}
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionGood })
	for i := range po.Levels {
		po.Levels[i].BlockSize = hotBlockSize
	}
	for i := len(po.Levels) - coldLevels; i < len(po.Levels); i++ {
		po.Levels[i].BlockSize = coldBlockSize
	}
	return po, cache.Unref
}

// The store's sstables are compressed as Pebble's DBCompressionGood
// preset says: the fastest codec (MinLZ; Snappy on arm64) on L0 to L4,
// which memtable flushes and most compactions write while events arrive,
// and Zstandard on the two bottom levels (level 1 on L5, level 3 on L6),
// where nearly all the data of a time-series store ends up and stays.
// Every codec is pure Go without cgo (Zstandard through
// klauspost/compress; with cgo, Pebble links the C library instead, which
// writes the same format).
//
// coldBlockSize is the uncompressed size of a data block on the
// coldLevels bottom levels, 32 KiB rather than Pebble's 4 KiB: a block of
// events holds the same attribute names and neighbouring sort keys again
// and again, and Zstandard finds those repeats only within one block.
// The levels above keep hotBlockSize, Pebble's 4 KiB, for the recent data
// most point reads ask for: a read of one series' newest event
// decompresses one block, where 32 KiB blocks there would have it
// decompress eight times the bytes for the same event while another
// tenant reads the newest event of each of many series (`make bench`'s
// many-series rows, docs/benchmarks.md).
//
// Together the codecs and the larger blocks shrink the data after
// `timetable compact` well below Pebble's defaults (Snappy, 4 KiB blocks)
// for a little more peak memory and no measurable CPU per event; the
// "disk after a flush" row of docs/benchmarks.md is the current size. Much
// of what is left is the events' ids, a hash in every sort key (8 bytes
// in tables made now, 16 in tables made before id schemes: event.IDScheme),
// which nothing compresses.
const (
	coldBlockSize = 32 << 10
	hotBlockSize  = 4 << 10
	coldLevels    = 2
)

// pebbleLogger adapts a slog.Logger to Pebble's Logger.
type pebbleLogger struct{ l *slog.Logger }

// Infof logs Pebble's routine messages (WAL and compaction events) at
// Debug level: they are noise in a service's log.
func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

// Errorf logs at Error level.
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf logs at Error level and panics: Pebble calls it on corruption it
// cannot continue past, and a library must not exit the process.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble")
	panic("pebble: " + msg)
}
