package pebblestore

import (
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/storage"
)

// Errors of this backend, besides those of package storage.
var (
	// ErrInvalidTable marks a table spec DynamoDB would refuse too: a name
	// outside 3 to 255 characters of [A-Za-z0-9_.-], an unknown billing
	// mode, a negative capacity.
	ErrInvalidTable = errors.New("timetable: pebble: invalid table spec")
	// ErrFormat is returned by Open for a directory holding a Pebble DB
	// that this package did not write, or wrote in a newer layout.
	ErrFormat = errors.New("timetable: pebble: unknown data format")
)

// Store is a storage.Store on an embedded Pebble DB. All its methods may be
// called from any number of goroutines at once.
type Store struct {
	db     *pebble.DB
	clock  clock.Clock
	logger *slog.Logger

	catalog catalog
	// itemLocks serialise Updates of one item.
	itemLocks stripes

	// gate counts the calls in progress and the open iterators; Close
	// waits for them before it closes the DB, because Pebble panics on a
	// closed DB.
	gate storage.Gate

	// idle flushes the memtable and compacts once writes stop
	// (idleflush.go, idlecompact.go).
	idle idleFlusher
}

var _ storage.Store = (*Store)(nil)

// Open opens the store in directory dir, creating it if needed.
func Open(dir string, opts Options) (*Store, error) {
	return open(dir, opts, nil)
}

// open is Open, with Pebble's options changed by tweak when it is not nil
// (tests turn Pebble's own compactions off with it, to see what the
// store's do).
func open(dir string, opts Options, tweak func(*pebble.Options)) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	po, unref := pebbleOptions(opts)
	defer unref()
	if tweak != nil {
		tweak(po)
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("open pebble store %q: %w", dir, err)
	}
	s := &Store{db: db, clock: opts.Clock, logger: opts.Logger, itemLocks: stripes{seed: maphash.MakeSeed()}}
	if err := s.checkFormat(); err != nil {
		return nil, errors.Join(fmt.Errorf("open pebble store %q: %w", dir, err), db.Close())
	}
	if err := s.catalog.load(db); err != nil {
		return nil, errors.Join(fmt.Errorf("open pebble store %q: load catalog: %w", dir, err), db.Close())
	}
	s.idle.start(opts.IdleFlush, s.settle, func(err error) {
		s.logger.Error("flush and compaction of an idle store failed", "component", "pebble", "err", err)
	})
	return s, nil
}

// checkFormat stamps a new DB with formatVersion, and refuses a DB that is
// not empty and does not carry it.
func (s *Store) checkFormat() error {
	val, closer, err := s.db.Get(formatKey)
	if err == nil {
		defer closer.Close()
		if string(val) != formatVersion {
			return fmt.Errorf("%w: version %q, this build reads %q", ErrFormat, val, formatVersion)
		}
		return nil
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	empty := !it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	if !empty {
		return fmt.Errorf("%w: a Pebble DB without timetable's format stamp", ErrFormat)
	}
	return s.db.Set(formatKey, []byte(formatVersion), pebble.Sync)
}

// Close waits for the calls in progress to return and for every open
// iterator to be closed, then closes the DB. Calls made after Close has
// begun return storage.ErrClosed. It is safe to call twice; the second call returns
// nil at once.
func (s *Store) Close() error {
	if !s.gate.Close() {
		return nil
	}
	s.idle.stopFlushing()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close pebble store: %w", err)
	}
	return nil
}
