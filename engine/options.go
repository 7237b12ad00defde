package engine

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
)

// Options configure an engine. The zero value is the default for every
// field, as the Default constants say: the default family
// (family.Default), the wall clock, and no metrics. A negative number or
// duration is an error (Validate).
//
// The engine owns its settings, as Prometheus' tsdb.Options do: it reads
// no configuration file. Package config reads timetable's YAML file,
// whose Schema is this Schema, beside the settings of the server, MQTT
// and the store, which the engine never sees.
type Options struct {
	// Schema holds the families, the settings of logical tables and the
	// meta table. Nil Families mean the default family alone
	// (family.DefaultSchema), and an empty MetaTable DefaultMetaTable.
	Schema family.Schema
	// Limits bound what an event may hold; zero fields are event's
	// defaults.
	Limits event.Limits
	// Clock tells the time; nil means the wall clock.
	Clock clock.Clock
	// Logger receives the engine's logs; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the engine's metrics; nil registers none.
	Registerer prometheus.Registerer
	// QueryParallelism bounds the storage queries a Query runs at once;
	// zero means DefaultQueryParallelism.
	QueryParallelism int
	// WriteParallelism bounds the tables a Write writes at once; zero
	// means DefaultWriteParallelism.
	WriteParallelism int
	// MaxQueryPartitions is the query budget: it bounds the partitions
	// (a series' shard in one physical table) that queries and
	// aggregates of every series of a table hold at once, across the
	// whole DB. A read that finds no room within QueryBudgetWait fails
	// with ErrBusy; one that needs more than the budget waits for all of
	// it. Reads of one series take nothing from it; memory other reads
	// hold (InfluxQL's answers) takes from it through QueryHold. Zero
	// means DefaultMaxQueryPartitions.
	MaxQueryPartitions int
	// QueryBudgetWait is how long a read waits for room in the query
	// budget; zero means DefaultQueryBudgetWait.
	QueryBudgetWait time.Duration
	// ReadOnly opens the engine without creating anything: the meta table
	// must exist (Open fails with ErrNoMetaTable otherwise), tables found
	// without a registry entry are adopted in memory only, and writes are
	// refused.
	ReadOnly bool
	// Archives, when not nil, reads the tables that were archived and
	// deleted from their archives (package archive's Reader), so that a
	// query over an archived period answers as it did before. Without
	// it, such periods are gaps of the answers (Page.Gaps).
	Archives ArchiveReader
	// RouteTTL is how long a write trusts the registry entry of a table
	// it routed to before reading it again, to learn that the lifecycle
	// fenced it (write_fence.go); zero means registry.DefaultRouteTTL.
	RouteTTL time.Duration
	// WriteTimeout bounds a Write: past it the write fails with an error
	// wrapping storage.ErrUnavailable (503 with Retry-After), its events
	// stored or not, as a retry finds out; zero means
	// registry.DefaultWriteTimeout. The lifecycle's fence relies on it:
	// keep RouteTTL + WriteTimeout within its FenceSettle.
	WriteTimeout time.Duration
	// DefaultLimit is the number of events a query returns when it sets no
	// limit; zero means DefaultQueryLimit. MaxLimit caps a query's limit;
	// zero means DefaultMaxLimit.
	DefaultLimit, MaxLimit int
	// Rollups turns materialized rollups on for every logical table, as
	// family.Table.Rollups does for one.
	Rollups bool
	// Tables bounds the physical tables that writes make: the backfill
	// horizon, new tables per request and per tenant and hour, and the
	// account's table quota (TableBudget).
	Tables TableBudget
	// RollupSettle is how old a rollup's version markers must be before
	// the rollup is trusted or stored; zero means DefaultRollupSettle. A
	// Write to a table with rollups gets a deadline of half of it.
	RollupSettle time.Duration
	// IDScheme is the event id scheme (event.IDScheme) of the tables this
	// engine makes, recorded in each one's registry entry: zero means
	// event.LatestIDScheme. A table made for a time another table of the
	// family holds already (the next write month's) takes that table's
	// scheme instead. A table keeps the scheme it was made with
	// whatever this says, so tests set event.IDScheme1 to stand for a
	// deployment of a version before schemes, then open the same store
	// with the default. Not a setting of the configuration file.
	IDScheme event.IDScheme
	// WriteMonthOfEvent, with write-time grouping, files each event under
	// the write month of its own time instead of the month it is written
	// in, as if it had been written when it happened: an import of
	// history (timetable import) lands in the tables the events would
	// have had, not all in today's write month. A server leaves it off:
	// late data belongs in the month it arrives, so that a month's tables
	// stop changing once it ends. Not a setting of the configuration
	// file.
	WriteMonthOfEvent bool
}

// DefaultMetaTable is the meta table's name unless Schema.MetaTable says
// otherwise.
const DefaultMetaTable = "timetable_meta"

// Defaults of the zero fields of Options.
const (
	DefaultQueryParallelism = 16
	DefaultWriteParallelism = 4
	DefaultQueryLimit       = 1000
	DefaultMaxLimit         = 10000
	DefaultRollupSettle     = 15 * time.Minute
)

// Defaults of the query budget.
const (
	// DefaultMaxQueryPartitions bounds the partitions that reads of every
	// series hold at once: 65,536, each with its page and state, so that
	// their heap is bounded whatever the number of series (make bench's
	// many-series rows give the heap grown: docs/benchmarks.md). A
	// latest-10 of every series takes 27 per shard and
	// table (16 series read at once, 11 kept), whatever the number of
	// series; an aggregate of every series one per series, shard and
	// table.
	DefaultMaxQueryPartitions = 1 << 16
	// DefaultQueryBudgetWait is how long a read waits for room in the
	// query budget before it fails with ErrBusy.
	DefaultQueryBudgetWait = time.Second
)

// EnsureDefaults fills in the zero fields.
func (o *Options) EnsureDefaults() {
	if o.Schema.Families == nil {
		o.Schema.Families = []family.Family{family.Default()}
		if o.Schema.DefaultFamily == "" {
			o.Schema.DefaultFamily = family.Default().Name
		}
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Schema.MetaTable == "" {
		o.Schema.MetaTable = DefaultMetaTable
	}
	if o.QueryParallelism == 0 {
		o.QueryParallelism = DefaultQueryParallelism
	}
	if o.WriteParallelism == 0 {
		o.WriteParallelism = DefaultWriteParallelism
	}
	if o.MaxQueryPartitions == 0 {
		o.MaxQueryPartitions = DefaultMaxQueryPartitions
	}
	if o.QueryBudgetWait == 0 {
		o.QueryBudgetWait = DefaultQueryBudgetWait
	}
	if o.DefaultLimit == 0 {
		o.DefaultLimit = DefaultQueryLimit
	}
	if o.MaxLimit == 0 {
		o.MaxLimit = DefaultMaxLimit
	}
	if o.RollupSettle == 0 {
		o.RollupSettle = DefaultRollupSettle
	}
	if o.IDScheme == 0 {
		o.IDScheme = event.LatestIDScheme
	}
	o.Tables.ensureDefaults()
	if o.RouteTTL == 0 {
		o.RouteTTL = registry.DefaultRouteTTL
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = registry.DefaultWriteTimeout
	}
}

// Validate reports what is wrong with the options, if anything.
func (o *Options) Validate() error {
	if err := o.Schema.Validate(); err != nil {
		return fmt.Errorf("timetable: invalid schema: %w", err)
	}
	if err := o.Limits.Validate(); err != nil {
		return err
	}
	for _, f := range o.Schema.Families {
		if f.Namer().Validate() != nil {
			continue
		}
		if meta := o.Schema.MetaTable; len(meta) >= len(f.Prefix) && meta[:len(f.Prefix)] == f.Prefix {
			return fmt.Errorf("timetable: meta table %q would be inside family %q's prefix", meta, f.Name)
		}
	}
	if o.QueryParallelism < 1 || o.WriteParallelism < 1 || o.DefaultLimit < 1 || o.MaxLimit < o.DefaultLimit {
		return fmt.Errorf("timetable: parallelism and limits must be positive, and MaxLimit at least DefaultLimit")
	}
	if o.MaxQueryPartitions < 1 || o.QueryBudgetWait < 0 {
		return fmt.Errorf("timetable: MaxQueryPartitions must be positive, and QueryBudgetWait not negative")
	}
	if o.RollupSettle < 0 || o.RouteTTL < 0 || o.WriteTimeout < 0 {
		return fmt.Errorf("timetable: RollupSettle, RouteTTL and WriteTimeout must not be negative")
	}
	if o.IDScheme != 0 && !o.IDScheme.Valid() {
		return fmt.Errorf("timetable: IDScheme %d is no event id scheme", o.IDScheme)
	}
	return o.Tables.validate()
}

// policy resolves a logical table's settings once, for one Write, Query
// or Aggregate to pass down: its family, its layout, and whether it keeps
// rollups (its own setting, or Options.Rollups for every table).
func (db *DB) policy(table string) family.TablePolicy {
	p := db.opts.Schema.Policy(table)
	p.Rollups = p.Rollups || db.opts.Rollups
	return p
}
