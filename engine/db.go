package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Errors of the engine. Errors of the store and of event validation come
// through wrapped as they are.
var (
	// ErrUnknownTable is returned for a logical table that was never
	// written in the tenant.
	ErrUnknownTable = errors.New("timetable: logical table not found")
	// ErrBadQuery is returned for a query that makes no sense: an inverted
	// range, a negative limit, a bad name.
	ErrBadQuery = errors.New("timetable: bad query")
	// ErrBadCursor is returned for a cursor that was not issued for this
	// query, or was altered.
	ErrBadCursor = errors.New("timetable: bad cursor")
	// ErrBadTableName is returned for a logical table name outside
	// [A-Za-z0-9_.-]{1,255}, or "." or "..". (Tenant names have rules of
	// their own: tenant.ErrBadName.)
	ErrBadTableName = errors.New("timetable: bad name")
	// ErrBusy is returned by a query or aggregate of every series of a
	// table that found no room in the query budget
	// (Options.MaxQueryPartitions) within Options.QueryBudgetWait. The
	// same call may succeed later.
	ErrBusy = errors.New("timetable: busy with reads of every series")
	// ErrClosed is returned by calls on a closed engine.
	ErrClosed = errors.New("timetable: engine closed")
	// ErrReadOnly is returned by writes to an engine opened read-only.
	ErrReadOnly = errors.New("timetable: engine opened read-only")
	// ErrNoMetaTable is returned by Open of a read-only engine on a store
	// without a meta table: nothing was ever written there.
	ErrNoMetaTable = errors.New("timetable: no meta table (`timetable tenant add` or `timetable serve` creates it)")
)

// DB is an open engine. Its methods may be called from any number of
// goroutines at once.
type DB struct {
	store    storage.Store
	opts     Options
	meta     *metaTable
	registry *registry.Registry
	catalog  *catalog
	metrics  *metrics
	series   *seriesCache
	paths    *pathMemory
	budget   *queryBudget
	turns    *seriesTurns
	// tableBudget bounds the tables writes make (Options.Tables).
	tableBudget *tableBudget

	// mu.closed is set by Close, which then waits for the calls in
	// flight, each of which holds inflight.
	mu struct {
		sync.RWMutex
		closed bool
	}
	inflight sync.WaitGroup
}

// Open opens an engine on a store: it creates the meta table if needed,
// and registers in the table registry the tables of its families that the
// store has without an entry (tables of a version before the registry).
// The engine does not own the store: Close leaves it open.
func Open(ctx context.Context, store storage.Store, opts Options) (*DB, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	db := &DB{store: store, opts: opts, metrics: newMetrics(opts.Registerer), series: newSeriesCache(1 << 20), paths: newPathMemory()}
	db.budget = newQueryBudget(int64(opts.MaxQueryPartitions), opts.QueryBudgetWait, db.metrics)
	db.turns = newSeriesTurns(opts.QueryParallelism)
	db.tableBudget = newTableBudget(opts.Tables)
	m, err := openMetaTable(ctx, store, opts.Schema.MetaTable, opts.ReadOnly, opts.Clock)
	if err != nil {
		return nil, err
	}
	db.meta = m
	db.registry = registry.New(store, opts.Schema.MetaTable)
	db.catalog = newCatalog(store, db.registry, opts.Clock, opts.Logger, opts.ReadOnly, opts.IDScheme)
	db.catalog.readsArchives, db.catalog.routeTTL = opts.Archives != nil, opts.RouteTTL
	if err := db.catalog.adopt(ctx, opts.Schema.Families); err != nil {
		return nil, fmt.Errorf("register existing tables: %w", err)
	}
	return db, nil
}

// Registry returns the table registry the engine reads and writes.
func (db *DB) Registry() *registry.Registry { return db.registry }

// Options returns the options the engine runs with, defaults filled in.
func (db *DB) Options() Options { return db.opts }

// Close waits for calls in flight to finish and closes the engine. It
// does not close the store. It is safe to call twice.
func (db *DB) Close() error {
	db.mu.Lock()
	db.mu.closed = true
	db.mu.Unlock()
	db.inflight.Wait()
	return nil
}

// pingKey is the key Ping reads in the meta table; no item is ever
// stored under it.
const pingKey = "ping"

// Ping reports whether the store serves requests: it reads one item of
// the meta table (on DynamoDB one GetItem, a read unit), through the
// store's retries and bounded by ctx. It returns nil when the store
// answers, and otherwise the store's error (storage.ErrUnavailable for a
// store that cannot be reached, say), or ErrClosed.
func (db *DB) Ping(ctx context.Context) error {
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	_, err = db.store.GetItem(ctx, db.opts.Schema.MetaTable, pingKey, pingKey)
	if err != nil && !errors.Is(err, storage.ErrItemNotFound) {
		return fmt.Errorf("ping the store: %w", err)
	}
	return nil
}

// enter registers a call in flight; the caller must call the returned
// function when done.
func (db *DB) enter() (func(), error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.mu.closed {
		return nil, ErrClosed
	}
	db.inflight.Add(1)
	return db.inflight.Done, nil
}

// checkTableName returns ErrBadTableName for an invalid logical table name.
func checkTableName(name string) error {
	if !itemenc.ValidTableName(name) {
		return fmt.Errorf("%w: table %q: use 1 to 255 of A-Z, a-z, 0-9, _, . and -, other than . and ..", ErrBadTableName, name)
	}
	return nil
}
