package lifecycle

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Store is what the reconciler needs of a store: its tables to
// administer, and the items of the meta table that hold the registry.
type Store interface {
	storage.Tables
	registry.Store
}

// Options configure a Reconciler. The zero value of every field but Store
// and Families is a sensible default.
type Options struct {
	// Store holds the tables. Required.
	Store Store
	// Families are the policies; only their tables are ever touched.
	// Required.
	Families []family.Family
	// MetaTable names the table holding the table registry (and the
	// lease); DefaultMetaTable when empty. A cycle that acts creates it
	// when it is missing, so a lifecycle-only deployment (the Lambda)
	// needs nothing made beforehand.
	MetaTable string
	// Clock tells the time; the wall clock when nil.
	Clock clock.Clock
	// OpenArchiver opens the Archiver of a family's archive target and
	// format. When nil, a family with an archive target gets its tables
	// archived by nobody: they are reported as failed to archive, and
	// never deleted.
	OpenArchiver OpenArchiverFunc
	// Leaser, when set, lets the reconciler act only while it holds the
	// lease LeaseName. Nil means this process owns the store (Pebble).
	Leaser Leaser
	// LeaseName names the lease; DefaultLeaseName when empty.
	LeaseName string
	// Owner identifies this reconciler to the Leaser; the host name, the
	// process id and a random suffix when empty.
	Owner string
	// LeaseTTL is how long a lease lasts unless renewed; DefaultLeaseTTL
	// when zero. It should be longer than the interval between cycles, so
	// the holder renews it before it lapses.
	LeaseTTL time.Duration
	// FenceSettle is how long a fenced table waits before it is archived
	// or deleted (registry.Entry.FencedAt): long enough for every writer
	// to read the fence (their RouteTTL) and end the writes under way
	// (their WriteTimeout). Zero means registry.DefaultFenceSettle; a
	// negative value archives and deletes in the cycle that fences, for
	// tests and for stores no one writes to any more.
	FenceSettle time.Duration
	// Compaction is how the compact action packs a table: in place (the
	// zero value, for Pebble) or into the table's next physical table
	// (compact.NextGeneration, for DynamoDB, where an item deleted costs
	// a write unit and a table deleted nothing). The old table of a
	// rewrite is deleted FenceSettle after the switch.
	Compaction compact.Method
	// DeleteWait bounds the wait for a deleted table to be gone (and the
	// cycle's context bounds it too); zero means DefaultDeleteWait. A
	// table still deleting then counts as deleted.
	DeleteWait time.Duration
	// ClockSkew is the most this reconciler's clock may be ahead of the
	// writing servers' clocks: a table is archived or deleted only when
	// it is past its retention by this clock less ClockSkew, so a clock
	// that far ahead never takes a table its writers still fill. Zero
	// means DefaultClockSkew, and a negative value none; a clock further
	// ahead only costs the writers 503s (the fence) until the table is
	// gone, never an acknowledged event.
	ClockSkew time.Duration
	// Logger receives a line per action applied; slog.Default when nil.
	Logger *slog.Logger
	// Registerer, when set, receives the reconciler's metrics.
	Registerer prometheus.Registerer
}

// Defaults.
const (
	DefaultLeaseName = "lifecycle"
	DefaultMetaTable = "timetable_meta"
	DefaultLeaseTTL  = 15 * time.Minute
	// DefaultInterval is the mean time between cycles of Run.
	DefaultInterval = 5 * time.Minute
	// DefaultClockSkew is the skew between servers' clocks the lifecycle
	// allows for (Options.ClockSkew).
	DefaultClockSkew = 5 * time.Minute
	// DefaultDeleteWait is Options.DeleteWait's default.
	DefaultDeleteWait = 2 * time.Minute
)

var errInvalidOptions = errors.New("timetable: invalid lifecycle options")

// Validate reports what is wrong with the options, if anything.
func (o *Options) Validate() error {
	if o.Store == nil {
		return fmt.Errorf("%w: no store", errInvalidOptions)
	}
	if len(o.Families) == 0 {
		return fmt.Errorf("%w: no families", errInvalidOptions)
	}
	for _, f := range o.Families {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("%w: %w", errInvalidOptions, err)
		}
	}
	if o.LeaseTTL < 0 {
		return fmt.Errorf("%w: negative lease ttl", errInvalidOptions)
	}
	return nil
}

// EnsureDefaults fills in the zero fields.
func (o *Options) EnsureDefaults() {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.MetaTable == "" {
		o.MetaTable = DefaultMetaTable
	}
	if o.LeaseName == "" {
		o.LeaseName = DefaultLeaseName
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.FenceSettle == 0 {
		o.FenceSettle = registry.DefaultFenceSettle
	}
	if o.DeleteWait <= 0 {
		o.DeleteWait = DefaultDeleteWait
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultClockSkew
	}
	if o.Owner == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		rand.Read(b)
		o.Owner = fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
