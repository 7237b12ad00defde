package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// ErrMismatch marks an archive whose data, read back, does not match its
// manifest or the table it was made from.
var ErrMismatch = errors.New("timetable: archive does not match")

// Options configure an Archiver. The zero value is the default for every
// field; a negative RestoreBatch is an error (Validate).
type Options struct {
	// Clock tells the time stamped in manifests; nil means the wall clock.
	Clock clock.Clock
	// Logger receives the archiver's logs; nil means slog.Default().
	Logger *slog.Logger
	// S3 configures s3:// targets.
	S3 S3Options
	// TempDir is where the Parquet of an export gathers a part's items
	// (at most ParquetPartRows events, compressed) and its verification
	// reads a part back; empty means os.TempDir(). The NDJSON is never
	// spooled: it is streamed to the target.
	TempDir string
	// ScanSegments is the number of segments of the parallel scan of an
	// export, and of a table's check against its archive (CheckTable,
	// Verify) (storage.Segment); zero means DefaultScanSegments. Each
	// segment is checkpointed on its own.
	ScanSegments int
	// CheckSettle is how long after the lifecycle fenced a table
	// (registry.Entry.FencedAt) its check against its archive reads it
	// eventually consistent and keeps a checkpoint: the writers' fence
	// must have settled (the lifecycle's FenceSettle) and DynamoDB's
	// replicas converged since the last write. Zero means
	// DefaultCheckSettle; a negative value keeps every check strongly
	// consistent and without checkpoint.
	CheckSettle time.Duration
	// ParquetPartRows is the most events a Parquet file of an archive
	// holds; a table of more is written as several parts. Zero means
	// DefaultParquetPartRows.
	ParquetPartRows int64
	// DeadlineMargin is how long before its context's deadline an Archive
	// or Restore stops, so that it saves its checkpoint and its caller
	// releases its lease before the deadline (a Lambda's, which kills the
	// process); zero means DefaultDeadlineMargin. A context without a
	// deadline is not affected.
	DeadlineMargin time.Duration
	// RestoreCapacity is the capacity of a table a restore creates; zero
	// means on-demand billing, which takes a restore's burst of writes
	// without planning, with no maximum. family.Family.RestoreCapacity is
	// a family's: on demand, bounded by its backfill tier's maximum.
	RestoreCapacity storage.Capacity
	// RestoreBatch is the number of items a restore writes per BatchWrite;
	// zero means DefaultRestoreBatch.
	RestoreBatch int
	// Progress, when not nil, is called from the goroutine running an
	// Archive or Restore with the number of items just exported or
	// restored, for a progress bar.
	Progress func(items int)
	// Format is the archives' format. family.ArchiveParquet writes
	// Parquet files of the table's events beside the NDJSON, which
	// restore reads; family.ArchiveNDJSON writes the NDJSON alone. Empty
	// means Parquet for a table whose family and period are known (a
	// registry entry, or tags), which the archive reader (Reader) reads, and
	// NDJSON alone for another.
	Format family.ArchiveFormat
	// Method is how tables are exported and restored: MethodAuto (the
	// default, when empty) uses the store's own export to S3 and import
	// from S3 where the store has them (DynamoDB, not its local
	// emulators) and the target is s3://, and a scan otherwise;
	// MethodScan always scans; MethodNative always uses the store's own.
	Method Method
	// Facts, when not nil, returns the registry entry of a table (package
	// registry), whose family, period, write month and tier a manifest
	// records; found false when the registry has none. Without it, or
	// without an entry, they come from the table's tags, which an endpoint
	// without tagging (DynamoDB Local) does not keep.
	Facts func(ctx context.Context, table string) (e registry.Entry, found bool, err error)
}

// Defaults of Options.
const (
	// DefaultRestoreBatch is the items a restore writes per BatchWrite.
	DefaultRestoreBatch = 100
	// DefaultScanSegments is the segments of an export's parallel scan.
	DefaultScanSegments = 4
	// DefaultParquetPartRows is the most events of one Parquet file:
	// about 64 MB of spooled NDJSON (uncompressed) at 180 bytes an
	// event, and 8 MiB of sort keys (32 bytes an event).
	DefaultParquetPartRows = 1 << 18
	// DefaultDeadlineMargin is how long before its deadline an action
	// stops.
	DefaultDeadlineMargin = time.Minute
	// DefaultCheckSettle is how long after its fence a table is read
	// eventually consistent by its check: the lifecycle's default
	// FenceSettle, after which no write lands, and ten seconds for
	// DynamoDB's replicas to converge (its guide promises an eventually
	// consistent read the latest item "after a short time"; it is about a
	// second).
	DefaultCheckSettle = registry.DefaultFenceSettle + 10*time.Second
)

// errAborted ends an object written to a target that was aborted.
var errAborted = errors.New("timetable: archive object aborted")

// EnsureDefaults fills in the zero fields.
func (o *Options) EnsureDefaults() {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RestoreCapacity == (storage.Capacity{}) {
		o.RestoreCapacity = storage.Capacity{Billing: storage.OnDemand}
	}
	if o.RestoreBatch == 0 {
		o.RestoreBatch = DefaultRestoreBatch
	}
	if o.Progress == nil {
		o.Progress = func(int) {}
	}
	if o.ScanSegments == 0 {
		o.ScanSegments = DefaultScanSegments
	}
	if o.ParquetPartRows == 0 {
		o.ParquetPartRows = DefaultParquetPartRows
	}
	if o.CheckSettle == 0 {
		o.CheckSettle = DefaultCheckSettle
	}
	if o.DeadlineMargin == 0 {
		o.DeadlineMargin = DefaultDeadlineMargin
	}
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if o.RestoreBatch < 0 {
		return fmt.Errorf("archive options: RestoreBatch %d is negative", o.RestoreBatch)
	}
	if o.ScanSegments < 0 || o.ScanSegments > storage.MaxSegments {
		return fmt.Errorf("archive options: ScanSegments %d: must be 1 to %d", o.ScanSegments, storage.MaxSegments)
	}
	if o.ParquetPartRows < 0 || o.DeadlineMargin < 0 {
		return fmt.Errorf("archive options: ParquetPartRows and DeadlineMargin must not be negative")
	}
	if o.S3.PartSize != 0 && o.S3.PartSize < 5<<20 {
		return fmt.Errorf("archive options: S3 PartSize %d: S3 wants parts of at least 5 MiB", o.S3.PartSize)
	}
	switch o.Method {
	case "", MethodAuto, MethodNative, MethodScan:
	default:
		return fmt.Errorf("archive options: method %q: must be auto, native or scan", o.Method)
	}
	switch o.Format {
	case "", family.ArchiveNDJSON, family.ArchiveParquet:
	default:
		return fmt.Errorf("archive options: format %q: must be ndjson or parquet", o.Format)
	}
	return nil
}

// Store is what an archiver needs of a store: whole tables to read, and
// tables to create and fill when it restores.
type Store interface {
	storage.Scanner
	CreateTable(ctx context.Context, spec storage.TableSpec) error
	DescribeTable(ctx context.Context, name string) (storage.TableInfo, error)
	BatchWrite(ctx context.Context, table string, items []storage.Item) error
}

// Archiver exports tables of a store to a target, verifies the exports,
// and restores them. Its methods may be called from several goroutines at
// once, but two calls on the same table must not overlap.
type Archiver struct {
	store  Store
	target target
	opts   Options
}

// Open returns an archiver of store's tables to target, which is
// file:///abs/dir, file://relative/dir or s3://bucket/prefix. An s3
// target uses the standard AWS configuration chain; nothing is read or
// written before the first call. The store may be nil for an archiver
// that only lists archives and reads manifests.
func Open(ctx context.Context, target string, store Store, opts Options) (*Archiver, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t, err := parseTarget(ctx, target, opts.S3)
	if err != nil {
		return nil, err
	}
	return &Archiver{store: store, target: t, opts: opts}, nil
}

// Target returns the URL of the archiver's target.
func (a *Archiver) Target() string { return a.target.String() }

// manifestKey returns the key of the manifest of a generation's archive.
func manifestKey(table string, generation int64) string {
	_, m := objectNames(generation)
	return table + "/" + m
}

// generation returns the generation of the table now under the name, as
// the registry counts them (Options.Facts); 1 without a registry entry.
func (a *Archiver) generation(ctx context.Context, table string) (int64, error) {
	gs, err := a.generations(ctx, table)
	if err != nil {
		return 0, err
	}
	return gs[len(gs)-1].generation, nil
}

// archivedGeneration is one generation of a table and the name its
// archive is kept under: the physical table it was archived from.
type archivedGeneration struct {
	table      string
	generation int64
}

// generations returns the generations of the table named table (an
// entry's name, or the physical table a compaction rewrote it into,
// registry Entry.TableName), oldest first, as the registry counts them
// (Options.Facts), each with the name its archive is kept under: the
// entry's physical table for its own generation, a past archive's
// (registry PastArchive.TableName) for an earlier one, the entry's name
// otherwise. Without a registry entry, generation 1 under table.
func (a *Archiver) generations(ctx context.Context, table string) ([]archivedGeneration, error) {
	if a.opts.Facts == nil {
		return []archivedGeneration{{table, 1}}, nil
	}
	e, found, err := a.opts.Facts(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("registry entry of %q: %w", table, err)
	}
	if !found {
		return []archivedGeneration{{table, 1}}, nil
	}
	last := max(e.Generation, 1)
	gs := make([]archivedGeneration, last)
	for i := range gs {
		gs[i] = archivedGeneration{table: e.Name, generation: int64(i) + 1}
	}
	for _, p := range e.PastArchives {
		if p.Generation >= 1 && p.Generation < last {
			gs[p.Generation-1].table = p.TableName(e.Name)
		}
	}
	gs[last-1].table = e.TableName()
	return gs, nil
}

// Manifest returns the manifest of the archive of table's current
// generation, or an error wrapping ErrNotFound when there is none (no
// archive, or an export that never finished).
func (a *Archiver) Manifest(ctx context.Context, table string) (Manifest, error) {
	if err := checkTableName(table); err != nil {
		return Manifest{}, err
	}
	gs, err := a.generations(ctx, table)
	if err != nil {
		return Manifest{}, err
	}
	g := gs[len(gs)-1]
	return a.readManifest(ctx, manifestKey(g.table, g.generation))
}

func (a *Archiver) readManifest(ctx context.Context, key string) (Manifest, error) {
	r, err := a.target.get(ctx, key)
	if err != nil {
		return Manifest{}, fmt.Errorf("read manifest: %w", err)
	}
	defer r.Close()
	var m Manifest
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("read manifest %s: %w: %v", key, ErrFormat, err)
	}
	if m.FormatVersion < 1 || m.FormatVersion > FormatVersion {
		return Manifest{}, fmt.Errorf("read manifest %s: %w: format version %d, this build reads 1 to %d",
			key, ErrFormat, m.FormatVersion, FormatVersion)
	}
	return m, nil
}

// writeManifest writes m as the manifest of its table.
func (a *Archiver) writeManifest(ctx context.Context, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, key := m.keys()
	if err := a.target.put(ctx, key, strings.NewReader(string(b)), int64(len(b))); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// Verified reports whether table's current generation has an archive
// that was read back and checked. A missing manifest, or one not yet
// verified, is false with no error: so is the verified archive of an
// earlier table under the same name.
func (a *Archiver) Verified(ctx context.Context, table string) (bool, error) {
	m, err := a.Manifest(ctx, table)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("archive of %q verified: %w", table, err)
	}
	return m.Verified(), nil
}

// withDeadline returns ctx ending Options.DeadlineMargin before its
// deadline, if it has one.
func (a *Archiver) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, d.Add(-a.opts.DeadlineMargin))
}

// Archive exports table, reads the export back and verifies it against
// the manifest (whose count and content hash are the scan's), and then
// marks the manifest verified. Any archive of the table's generation is replaced: its
// manifest is removed first, so a crash at any point leaves either no
// manifest (the next Archive starts over) or a complete one. Archives of
// earlier generations are kept.
//
// Archive picks up where an earlier one stopped: an export whose scan
// stopped resumes from its checkpoint, and a complete export whose
// verification did not finish is verified again, not exported again.
//
// With a deadline, Archive stops Options.DeadlineMargin before it, saving
// its checkpoint, and returns an error wrapping ErrStopped.
func (a *Archiver) Archive(ctx context.Context, table string) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	ctx, cancel := a.withDeadline(ctx)
	defer cancel()
	m, err := a.Manifest(ctx, table)
	checked := false
	// An export in NDJSON alone does not do for a family archived in
	// Parquet now: it is made again.
	if err == nil && !m.Verified() && (a.opts.Format == family.ArchiveNDJSON || len(m.Parquet) > 0 || !m.parquetLayout()) {
		// An export finished; its verification did not.
		switch err := a.verify(ctx, m, false); {
		case err == nil:
			checked = true
		case errors.Is(err, ErrMismatch):
			a.opts.Logger.Warn("export does not match the table; exporting again", "table", table, "err", err)
		default:
			return fmt.Errorf("archive %q: verify the export made %s: %w", table, m.CreatedAt.Format(time.RFC3339), err)
		}
	}
	if !checked {
		if m, err = a.exportAny(ctx, table); err != nil {
			return fmt.Errorf("archive %q: %w", table, err)
		}
		if err := a.verify(ctx, m, false); err != nil {
			return fmt.Errorf("archive %q: %w", table, err)
		}
	}
	now := a.opts.Clock.Now().UTC()
	m.VerifiedAt = &now
	if err := a.writeManifest(ctx, m); err != nil {
		return fmt.Errorf("archive %q: %w", table, err)
	}
	a.opts.Logger.Info("archived table", "table", table, "target", a.target.String(),
		"items", m.ItemCount, "bytes", m.DataBytes, "parquet_files", len(m.Parquet))
	return nil
}

// Verify reads table's archive back from the target and checks the data
// file's size and SHA-256, its item count and its content hash against
// the manifest and, while the table exists, against a fresh scan of it
// (which Archive does not do: see the package documentation),
// and each Parquet file's size, SHA-256 and row count against the
// manifest and the events of the data file. It
// returns an error wrapping ErrMismatch when they differ, and ErrNotFound
// when there is no manifest. It does not change the manifest.
func (a *Archiver) Verify(ctx context.Context, table string) error {
	m, err := a.Manifest(ctx, table)
	if err != nil {
		return fmt.Errorf("verify archive of %q: %w", table, err)
	}
	if err := a.verify(ctx, m, true); err != nil {
		return fmt.Errorf("verify archive of %q: %w", table, err)
	}
	return nil
}

// verify checks the archive m describes against its manifest. With
// scanTable, it also scans the table, when it exists, and compares.
func (a *Archiver) verify(ctx context.Context, m Manifest, scanTable bool) error {
	var events int64
	var buf []itemenc.TableEvent
	got, err := a.readBack(ctx, m, func(it storage.Item) error {
		if len(m.Parquet) > 0 {
			var err error
			if buf, err = chunk.ItemEvents(buf[:0], it, m.idScheme()); err != nil {
				return err
			}
			events += int64(len(buf))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := compare("manifest", m, got); err != nil {
		return err
	}
	if err := a.verifyParquet(ctx, m, events); err != nil {
		return err
	}
	if !scanTable {
		return nil
	}
	scan, err := a.scanTable(ctx, m, false)
	if errors.Is(err, storage.ErrTableNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if diff := tableDiff(scan, got.count, got.content); diff != "" {
		return fmt.Errorf("%w: %s", ErrMismatch, diff)
	}
	return nil
}

// compare checks what was read back against a manifest.
func compare(what string, m Manifest, got readResult) error {
	var diffs []string
	if got.bytes != m.DataBytes {
		diffs = append(diffs, fmt.Sprintf("data is %d bytes, %s says %d", got.bytes, what, m.DataBytes))
	}
	if got.fileSHA != m.DataSHA256 {
		diffs = append(diffs, fmt.Sprintf("data SHA-256 is %s, %s says %s", short(got.fileSHA), what, short(m.DataSHA256)))
	}
	if got.count != m.ItemCount {
		diffs = append(diffs, fmt.Sprintf("data holds %d items, %s says %d", got.count, what, m.ItemCount))
	}
	if got.content != m.ContentSHA256 {
		diffs = append(diffs, fmt.Sprintf("content hash is %s, %s says %s", short(got.content), what, short(m.ContentSHA256)))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(diffs, "; "))
	}
	return nil
}

// short abbreviates a hex hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// checkTableName refuses a name that could escape its folder of the
// target: a table name is 3 to 255 of [A-Za-z0-9_.-], as in DynamoDB.
func checkTableName(name string) error {
	if len(name) < 3 || len(name) > 255 {
		return fmt.Errorf("%w: table name %q", ErrBadTarget, name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("%w: table name %q", ErrBadTarget, name)
		}
	}
	return nil
}
