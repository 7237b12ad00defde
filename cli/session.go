package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// session is what a command works with: an engine open on a store.
type session struct {
	log   *slog.Logger
	clock clock.Clock
	store storage.Store
	db    *engine.DB
	// tenants is the directory of tenants and their API keys, with the
	// cache of keys the configuration bounds (key_cache).
	tenants  *tenant.Directory
	archives *archive.Reader
	// cfg is the configuration read, whose Schema the engine was opened
	// with; the rest (MQTT, the archive targets' families, the meta
	// table as written) is the CLI's.
	cfg config.Config
	// storeSpec names the store, as --store does.
	storeSpec string
}

// sessionOptions say how to open a session.
type sessionOptions struct {
	// logLevel is the level when --log-level is not set.
	logLevel slog.Level
	// existing refuses to create an embedded store.
	existing bool
	// readOnly opens the engine read-only: the command creates nothing,
	// not even the meta table.
	readOnly bool
	// registerer receives the engine's metrics, and the store's.
	registerer prometheus.Registerer
	// history opens the engine for an import of history: each event
	// filed under its own time's write month
	// (engine.Options.WriteMonthOfEvent), and with anyAge events older
	// than the backfill horizon taken.
	history, anyAge bool
}

// openSession reads the configuration, opens the store and the engine on
// it. Logs go to stderr.
func (g *globals) openSession(ctx context.Context, stderr io.Writer, o sessionOptions) (*session, error) {
	log, err := g.logger(stderr, o.logLevel)
	if err != nil {
		return nil, err
	}
	clk, err := g.clock()
	if err != nil {
		return nil, err
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	spec := g.storeFor(cfg)
	store, err := openStore(ctx, spec, storeOptions{logger: log, clock: clk, existing: o.existing, registerer: o.registerer, pebble: cfg.Pebble})
	if err != nil {
		return nil, err
	}
	// Archived periods are read from their archives' Parquet (the archive
	// reader); S3-compatible servers are addressed by path as
	// AWS_ENDPOINT_URL_S3 suggests.
	archives := archive.NewReader(archive.ReaderOptions{S3: archive.S3Options{UsePathStyle: os.Getenv("AWS_ENDPOINT_URL_S3") != ""},
		CacheDir: cfg.ArchiveCache.Dir, CacheBytes: cfg.ArchiveCache.Bytes, Logger: log})
	budget := tableBudget(cfg.TableBudget)
	if o.anyAge {
		budget.BackfillHorizon = engine.NoBackfillHorizon
	}
	db, err := engine.Open(ctx, store, engine.Options{Schema: cfg.Schema, Clock: clk, Logger: log, Registerer: o.registerer, ReadOnly: o.readOnly, Archives: archives,
		Tables: budget, WriteMonthOfEvent: o.history})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open engine: %w", err), store.Close(), archives.Close())
	}
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: clk, KeyCache: cfg.KeyCache})
	return &session{log: log, clock: clk, store: store, db: db, tenants: tenants, archives: archives, cfg: cfg, storeSpec: spec}, nil
}

// Close closes the engine, then the store and the archive reader.
func (s *session) Close() error {
	return errors.Join(s.db.Close(), s.store.Close(), s.archives.Close())
}

// tenant checks that a tenant exists.
func (s *session) tenant(ctx context.Context, name string) error {
	if err := tenant.ValidName(name); err != nil {
		return usageError{err}
	}
	ts, err := s.tenants.List(ctx)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Name == name {
			return nil
		}
	}
	return fmt.Errorf("no tenant %q: create it with `timetable tenant add %s`", name, name)
}

// storeFor returns the store to open: --store, else the configuration's,
// else the default.
func (g *globals) storeFor(cfg config.Config) string {
	if g.storeSpec != "" {
		return g.storeSpec
	}
	if cfg.Store != "" {
		return cfg.Store
	}
	return "pebble:" + defaultPebbleDir
}

// cpuPool is the server's pool of slots for heavy CPU work: on Pebble,
// where an aggregate's series are read from memory and local disk, one
// slot fewer than the cores; none on DynamoDB, whose reads wait on the
// network.
func cpuPool(spec string) *admission.CPU {
	if !strings.HasPrefix(spec, "pebble:") {
		return nil
	}
	return admission.NewCPU(0)
}

// storeKind is the kind of store a --store value names, "pebble" or
// "dynamodb", for the console (server.Options.StoreKind); the empty
// spec is the default Pebble store.
func storeKind(spec string) string {
	if spec == "" || strings.HasPrefix(spec, "pebble") {
		return "pebble"
	}
	return "dynamodb"
}

// tableBudget is the engine's table budget of a configuration.
func tableBudget(b config.TableBudget) engine.TableBudget {
	tb := engine.TableBudget{BackfillHorizon: b.BackfillHorizon, MaxNewTablesPerRequest: b.NewTablesPerRequest,
		MaxNewTablesPerTenantHour: b.NewTablesPerTenantHour, TableQuota: b.TableQuota}
	if b.NoHorizon {
		tb.BackfillHorizon = engine.NoBackfillHorizon
	}
	return tb
}
