package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"golang.org/x/time/rate"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Errors of a migration.
var (
	// ErrTargetInUse marks a target that holds what this migration did
	// not write there: a table of the same name, or a meta table of
	// another deployment or another migration's. Nothing was written.
	ErrTargetInUse = errors.New("timetable: the target store is in use")
	// ErrDiffers marks a table whose copy does not hold the items of its
	// source once copied twice.
	ErrDiffers = errors.New("timetable: the copy differs from its source")
	// ErrNoSource marks a source without the meta table named: nothing to
	// migrate, or the wrong configuration.
	ErrNoSource = errors.New("timetable: no timetable store at the source")
)

// Store is what a migration reads from its source and writes to its
// target: a storage.Store without Close, which the caller keeps.
type Store interface {
	storage.Tables
	storage.Items
	storage.Scanner
}

// Options configure a migration. The zero value of every field but
// MetaTable is a default.
type Options struct {
	// MetaTable is the meta table of both stores (the configuration's
	// meta_table, engine.DefaultMetaTable by default).
	MetaTable string
	// Families are the families of the target's configuration: a
	// family of the source's registry not among them is reported in
	// Plan.Unknown. Nil reports none.
	Families []string
	// Source names the source (as --store does), recorded in the
	// target's meta table: a migration from another source into the
	// same target is refused with ErrTargetInUse.
	Source string
	// WriteUnits, when above 0, is the most write capacity units a second
	// the copy spends on the target.
	WriteUnits int
	// PageItems and PageBytes bound a page, the items read and written at
	// a time: DefaultPageItems and DefaultPageBytes when 0.
	PageItems int
	PageBytes int
	// Writers is how many parts of a page are written at once, each by a
	// BatchWrite of its own (which a DynamoDB store sends as several
	// requests at once): DefaultWriters when 0.
	Writers int
	// Progress, when not nil, is told of items copied as they are,
	// including, on a resumed run, those a previous run copied.
	Progress func(items int)
	// Logger receives what the migration does; none when nil.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultPageItems = 1000
	DefaultPageBytes = 4 << 20
	DefaultWriters   = 4
)

// Migration copies one store into another (see the package
// documentation). It is used by one goroutine.
type Migration struct {
	from, to Store
	opts     Options
	// writes is the budget of write units; nil for none.
	writes *rate.Limiter
}

// New returns a migration from one store into another.
func New(from, to Store, o Options) (*Migration, error) {
	if o.MetaTable == "" {
		return nil, errors.New("migrate: no meta table named")
	}
	if o.WriteUnits < 0 || o.PageItems < 0 || o.PageBytes < 0 || o.Writers < 0 {
		return nil, fmt.Errorf("migrate: write units %d, page of %d items and %d bytes, %d writers: none may be negative", o.WriteUnits, o.PageItems, o.PageBytes, o.Writers)
	}
	if o.Writers == 0 {
		o.Writers = DefaultWriters
	}
	if o.PageItems == 0 {
		o.PageItems = DefaultPageItems
	}
	if o.PageBytes == 0 {
		o.PageBytes = DefaultPageBytes
	}
	if o.Progress == nil {
		o.Progress = func(int) {}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Migration{from: from, to: to, opts: o}
	if o.WriteUnits > 0 {
		m.writes = rate.NewLimiter(rate.Limit(o.WriteUnits), o.WriteUnits)
	}
	return m, nil
}

// Table is a table a migration copies.
type Table struct {
	// Name is the table's name, the same in both stores.
	Name string
	// Spec is what the table is made with on the target.
	Spec storage.TableSpec
	// Meta is set for the meta table.
	Meta bool
	// Items is the source's estimate of the table's items; -1 when
	// unknown.
	Items int64
}

// Plan is what a migration will copy.
type Plan struct {
	// Tables are the data tables, family by family in the order of
	// their periods, then the meta table.
	Tables []Table
	// Items is the sum of the tables' estimates (storage.TableInfo's
	// ItemCount: DynamoDB's are up to six hours old), -1 when one is
	// unknown.
	Items int64
	// Unknown are the families of the source's registry that
	// Options.Families lacks.
	Unknown []string
	// Gone are the tables the registry names live that the source does
	// not have (a table deleted by hand): there is nothing to copy.
	Gone []string
}

// Plan reads the source's registry and returns the tables to copy.
func (m *Migration) Plan(ctx context.Context) (Plan, error) {
	meta := m.opts.MetaTable
	info, err := m.from.DescribeTable(ctx, meta)
	if errors.Is(err, storage.ErrTableNotFound) {
		return Plan{}, fmt.Errorf("%w: the source has no meta table %q (does --config name the source's meta_table?)", ErrNoSource, meta)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("describe the source's meta table %q: %w", meta, err)
	}
	families, err := m.registryFamilies(ctx)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	reg := registry.New(m.from, meta)
	for _, f := range families {
		if m.opts.Families != nil && !slices.Contains(m.opts.Families, f) {
			p.Unknown = append(p.Unknown, f)
		}
		entries, err := reg.List(ctx, f)
		if err != nil {
			return Plan{}, fmt.Errorf("list the registry of family %q: %w", f, err)
		}
		for _, e := range entries {
			if !e.State.Live() {
				continue
			}
			ti, err := m.from.DescribeTable(ctx, e.Name)
			if errors.Is(err, storage.ErrTableNotFound) {
				p.Gone = append(p.Gone, e.Name)
				continue
			}
			if err != nil {
				return Plan{}, fmt.Errorf("describe the source's table %q: %w", e.Name, err)
			}
			p.Tables = append(p.Tables, Table{Name: e.Name, Spec: e.Spec(), Items: ti.ItemCount})
		}
	}
	p.Tables = append(p.Tables, Table{Name: meta, Spec: metatable.Spec(meta), Meta: true, Items: info.ItemCount})
	for _, t := range p.Tables {
		if t.Items < 0 {
			p.Items = -1
			break
		}
		p.Items += t.Items
	}
	return p, nil
}

// registryFamilies returns the families with registry entries in the
// source's meta table, sorted.
func (m *Migration) registryFamilies(ctx context.Context) ([]string, error) {
	it := m.from.Scan(ctx, m.opts.MetaTable)
	defer it.Close()
	var fs []string
	for it.Next() {
		if f, ok := metatable.RegistryFamily(it.Item().PK); ok && !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("scan the source's meta table %q: %w", m.opts.MetaTable, err)
	}
	slices.Sort(fs)
	return fs, nil
}

// Report is what a migration did.
type Report struct {
	Tables []TableReport
}

// Items returns the items of every table verified.
func (r Report) Items() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Items
	}
	return n
}

// TableReport is what a migration did to one table.
type TableReport struct {
	Name string
	// Items is the number of items both stores hold, Hash their content
	// hash (archive.ContentHash).
	Items int64
	Hash  string
	// Copied is the number of items this run wrote; 0 for a table a
	// previous run copied and verified.
	Copied int64
}

// Run copies the tables of p, in order, each verified before the next
// is copied. It may be stopped at any point and run again (see the
// package documentation).
func (m *Migration) Run(ctx context.Context, p Plan) (Report, error) {
	if err := m.claimTarget(ctx); err != nil {
		return Report{}, err
	}
	var r Report
	for _, t := range p.Tables {
		tr, err := m.table(ctx, t)
		if err != nil {
			return r, err
		}
		r.Tables = append(r.Tables, tr)
	}
	m.opts.Logger.Info("migrated", "tables", len(r.Tables), "items", r.Items())
	return r, nil
}

// claimTarget makes the target's meta table and records the migration
// there, or finds it recorded by a previous run from the same source.
// It refuses a meta table holding anything else.
func (m *Migration) claimTarget(ctx context.Context) error {
	meta := m.opts.MetaTable
	if err := m.to.CreateTable(ctx, metatable.Spec(meta)); err != nil && !errors.Is(err, storage.ErrTableExists) {
		return fmt.Errorf("create the target's meta table %q: %w", meta, err)
	}
	pk, sk := metatable.Migration("")
	rec, err := m.to.GetItem(ctx, meta, pk, sk)
	switch {
	case err == nil:
		if src, _ := rec.Attrs[attrSource].(string); src != m.opts.Source {
			return fmt.Errorf("%w: its meta table %q records a migration from %q, not from %q", ErrTargetInUse, meta, src, m.opts.Source)
		}
		return nil
	case !errors.Is(err, storage.ErrItemNotFound):
		return fmt.Errorf("read the migration's record in %q: %w", meta, err)
	}
	it := m.to.Scan(ctx, meta)
	defer it.Close()
	for it.Next() {
		if pk := it.Item().PK; !metatable.IsMigration(pk) {
			return fmt.Errorf("%w: its meta table %q holds the items of a timetable already (%q): migrate into a store with no timetable, or with another meta_table", ErrTargetInUse, meta, pk)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("scan the target's meta table %q: %w", meta, err)
	}
	rec = storage.Item{PK: pk, SK: sk, Attrs: map[string]any{attrSource: m.opts.Source}}
	if err := m.to.BatchWrite(ctx, meta, []storage.Item{rec}); err != nil {
		return fmt.Errorf("record the migration in %q: %w", meta, err)
	}
	return nil
}
