package archive

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Method is how an archiver exports and restores tables.
type Method string

// Methods of Options.Method.
const (
	// MethodAuto uses the store's own export and import (MethodNative)
	// where the store and the target allow it, and scans otherwise.
	MethodAuto Method = "auto"
	// MethodNative exports with the store's own export to S3 (DynamoDB's
	// ExportTableToPointInTime) and restores with its import from S3
	// (ImportTable); an archive it cannot make that way fails.
	MethodNative Method = "native"
	// MethodScan reads the table with a parallel scan and writes the
	// archive itself, and restores with BatchWrite.
	MethodScan Method = "scan"
)

// NativeExport is what a manifest records of an archive made by the
// store's own export (Method): the export and its data files.
type NativeExport struct {
	// ARN is the export's ARN.
	ARN string `json:"arn"`
	// ExportTime is the point in time the export is of.
	ExportTime time.Time `json:"export_time"`
	// Summary is the key, relative to the target, of the export's
	// manifest-summary.json.
	Summary string `json:"summary"`
	// Files are the keys, relative to the target, of its data files, in
	// the order of its manifest-files.json: the archive's data is their
	// concatenation (each a gzip stream), which DataBytes and DataSHA256
	// describe.
	Files []string `json:"files"`
	// BilledBytes is the table size the export was billed for.
	BilledBytes int64 `json:"billed_bytes"`
}

// exportSummary is the part of an export's manifest-summary.json this
// package reads.
type exportSummary struct {
	ExportARN          string `json:"exportArn"`
	ItemCount          int64  `json:"itemCount"`
	OutputFormat       string `json:"outputFormat"`
	ManifestFilesS3Key string `json:"manifestFilesS3Key"`
}

// exportFile is one line of an export's manifest-files.json.
type exportFile struct {
	ItemCount     int64  `json:"itemCount"`
	MD5Checksum   string `json:"md5Checksum"`
	DataFileS3Key string `json:"dataFileS3Key"`
}

// native returns the store's own export and the target's bucket and
// prefix when Options.Method lets the archiver use them and both exist.
func (a *Archiver) native() (storage.Exporter, storage.S3Location, bool) {
	if a.opts.Method == MethodScan {
		return nil, storage.S3Location{}, false
	}
	x, ok := a.store.(storage.Exporter)
	t, isS3 := a.target.(*s3Target)
	if !ok || !isS3 {
		return nil, storage.S3Location{}, false
	}
	return x, storage.S3Location{Bucket: t.bucket, Prefix: t.prefix}, true
}

// exportAny exports a table by the store's own export where Options.Method
// and the store allow it, and by a scan otherwise.
func (a *Archiver) exportAny(ctx context.Context, table string) (Manifest, error) {
	x, loc, ok := a.native()
	if !ok {
		if a.opts.Method == MethodNative {
			return Manifest{}, fmt.Errorf("export: method native needs a store with its own export (DynamoDB) and an s3:// target: %w", storage.ErrUnsupported)
		}
		return a.export(ctx, table)
	}
	m, err := a.exportNative(ctx, table, x, loc)
	if errors.Is(err, storage.ErrUnsupported) && a.opts.Method != MethodNative {
		a.opts.Logger.Debug("the store has no export of its own here: scanning", "table", table, "err", err)
		return a.export(ctx, table)
	}
	return m, err
}

// exportNative archives a table through the store's own export to S3:
// the store writes the table's items in DYNAMODB_JSON under
// {target}/{table}/export/ (export-N/ for generation N), without reading
// it through its capacity, and this reads the export back once, as
// AWS's layout describes it, to check it and to learn what the manifest
// records: every data file's item count and MD5 against the export's
// manifest-files.json, their sum against manifest-summary.json and the
// store's count, and the content hash of the items; the Parquet of the
// archive reader reads is written from that same reading. The manifest it writes
// is unverified, as export's.
func (a *Archiver) exportNative(ctx context.Context, table string, x storage.Exporter, loc storage.S3Location) (m Manifest, err error) {
	m, _, shards, _, err := a.startManifest(ctx, table)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	_, manifestKey := m.keys()
	if err := a.target.del(ctx, manifestKey); err != nil {
		return Manifest{}, fmt.Errorf("export: remove old manifest: %w", err)
	}
	dir := table + "/export"
	if g := m.generation(); g > 1 {
		dir = fmt.Sprintf("%s/export-%d", table, g)
	}
	dest := loc
	dest.Prefix = joinKey(loc.Prefix, dir)
	done, err := x.ExportTable(ctx, table, dest)
	if err != nil {
		if ctx.Err() != nil {
			// The export goes on in the store; the next Archive asks for
			// the same one and waits for it.
			return Manifest{}, fmt.Errorf("export: %w: %w", ErrStopped, errors.Join(err, ctx.Err()))
		}
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	rel := func(key string) (string, error) {
		if loc.Prefix == "" {
			return key, nil
		}
		k, ok := strings.CutPrefix(key, loc.Prefix+"/")
		if !ok {
			return "", fmt.Errorf("%w: export object %s is outside the target %s", ErrMismatch, key, a.target)
		}
		return k, nil
	}
	summaryKey, err := rel(done.ManifestKey)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	var summary exportSummary
	if err := a.readJSON(ctx, summaryKey, &summary); err != nil {
		return Manifest{}, fmt.Errorf("export %s: %w", done.ARN, err)
	}
	if summary.ExportARN != done.ARN || summary.OutputFormat != "DYNAMODB_JSON" || summary.ItemCount != done.ItemCount {
		return Manifest{}, fmt.Errorf("export %s: %w: manifest-summary.json names export %s of %d items in %s",
			done.ARN, ErrMismatch, summary.ExportARN, summary.ItemCount, summary.OutputFormat)
	}
	filesKey, err := rel(summary.ManifestFilesS3Key)
	if err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	files, err := a.readExportFiles(ctx, filesKey)
	if err != nil {
		return Manifest{}, fmt.Errorf("export %s: %w", done.ARN, err)
	}

	var parquet *parquetParts
	if a.opts.Format == family.ArchiveParquet || a.opts.Format == "" && m.parquetLayout() {
		if parquet, err = a.newParquetParts(m, shards, nil); err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		defer func() { err = errors.Join(err, parquet.close()) }()
	}
	var content ContentHash
	sum := sha256.New()
	var bytes int64
	native := &NativeExport{ARN: done.ARN, ExportTime: done.ExportTime.UTC(), Summary: summaryKey, BilledBytes: done.BilledBytes}
	for _, f := range files {
		key, err := rel(f.DataFileS3Key)
		if err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		n, size, err := a.readExportFile(ctx, key, f, sum, &content, func(item storage.Item, line []byte) error {
			a.opts.Progress(1)
			if parquet == nil {
				return nil
			}
			return parquet.add(ctx, item, line)
		})
		if err != nil {
			return Manifest{}, fmt.Errorf("export %s: %w", done.ARN, err)
		}
		if n != f.ItemCount {
			return Manifest{}, fmt.Errorf("export %s: %w: %s holds %d items, manifest-files.json says %d", done.ARN, ErrMismatch, key, n, f.ItemCount)
		}
		bytes += size
		native.Files = append(native.Files, key)
	}
	if content.Count() != done.ItemCount {
		return Manifest{}, fmt.Errorf("export %s: %w: its files hold %d items, the export says %d", done.ARN, ErrMismatch, content.Count(), done.ItemCount)
	}
	if parquet != nil {
		if err := parquet.flush(ctx, true); err != nil {
			return Manifest{}, fmt.Errorf("export: %w", err)
		}
		m.Parquet = parquet.files
	}
	m.Export = native
	m.Data = ""
	m.ItemCount = content.Count()
	m.ContentSHA256 = content.Sum()
	m.DataBytes = bytes
	m.DataSHA256 = hex.EncodeToString(sum.Sum(nil))
	if err := a.writeManifest(ctx, m); err != nil {
		return Manifest{}, fmt.Errorf("export: %w", err)
	}
	a.opts.Logger.Info("table exported by the store", "table", table, "export", done.ARN, "items", m.ItemCount, "files", len(files))
	return m, nil
}

// readJSON decodes one JSON object of the target.
func (a *Archiver) readJSON(ctx context.Context, key string, v any) error {
	r, err := a.target.get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMismatch, key, err)
	}
	return nil
}

// readExportFiles reads an export's manifest-files.json, a JSON object
// per line.
func (a *Archiver) readExportFiles(ctx context.Context, key string) ([]exportFile, error) {
	r, err := a.target.get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var files []exportFile
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var f exportFile
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil || f.DataFileS3Key == "" {
			return nil, fmt.Errorf("%w: %s line %d: %q", ErrMismatch, key, len(files)+1, sc.Text())
		}
		files = append(files, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return files, nil
}

// readExportFile reads one data file of an export, checking its MD5
// against the export's, writing its bytes into sum, and calls fn with
// each item and its canonical line, added to content. It returns the
// file's items and size.
func (a *Archiver) readExportFile(ctx context.Context, key string, f exportFile, sum hash.Hash, content *ContentHash,
	fn func(storage.Item, []byte) error) (items, size int64, err error) {
	r, err := a.target.get(ctx, key)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	md := md5.New()
	cr := &countReader{r: io.TeeReader(r, io.MultiWriter(md, sum))}
	before := content.Count()
	if err := readItems(cr, nil, func(item storage.Item) error {
		line, err := MarshalItem(item)
		if err != nil {
			return err
		}
		content.Add(line)
		return fn(item, line)
	}); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", key, err)
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", key, err)
	}
	if got := base64.StdEncoding.EncodeToString(md.Sum(nil)); f.MD5Checksum != "" && got != f.MD5Checksum {
		return 0, 0, fmt.Errorf("%w: %s has MD5 %s, manifest-files.json says %s", ErrMismatch, key, got, f.MD5Checksum)
	}
	return content.Count() - before, cr.n, nil
}

// dataReader opens the data of m's archive: its data file or, for an
// archive of the store's own export, the concatenation of the export's
// data files, each a gzip stream, which a gzip reader reads as one.
func (a *Archiver) dataReader(ctx context.Context, m Manifest) (io.ReadCloser, error) {
	if m.Export == nil {
		dataKey, _ := m.keys()
		return a.target.get(ctx, dataKey)
	}
	return &objectsReader{ctx: ctx, t: a.target, keys: m.Export.Files}, nil
}

// objectsReader reads objects of a target one after the other, opening
// each when the one before ends.
type objectsReader struct {
	ctx  context.Context
	t    target
	keys []string
	cur  io.ReadCloser
}

func (o *objectsReader) Read(p []byte) (int, error) {
	for {
		if o.cur == nil {
			if len(o.keys) == 0 {
				return 0, io.EOF
			}
			r, err := o.t.get(o.ctx, o.keys[0])
			if err != nil {
				return 0, err
			}
			o.cur, o.keys = r, o.keys[1:]
		}
		n, err := o.cur.Read(p)
		if err == io.EOF {
			err = o.cur.Close()
			o.cur = nil
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		return n, err
	}
}

func (o *objectsReader) Close() error {
	if o.cur != nil {
		return o.cur.Close()
	}
	return nil
}

// importPrefix is the S3 prefix under which the store's import finds
// the gzip-compressed DYNAMODB_JSON items of m's archive, and nothing
// else: the export's data folder, or the data file itself.
func importPrefix(loc storage.S3Location, m Manifest) string {
	if m.Export != nil && len(m.Export.Files) > 0 {
		f := m.Export.Files[0]
		return joinKey(loc.Prefix, f[:strings.LastIndexByte(f, '/')+1])
	}
	dataKey, _ := m.keys()
	return joinKey(loc.Prefix, dataKey)
}

// restoreNative restores the single archive m into a new table through
// the store's own import from S3. ok is false when the store has no
// import here, and the caller writes the items itself.
func (a *Archiver) restoreNative(ctx context.Context, m Manifest, into string) (ok bool, err error) {
	x, loc, native := a.native()
	if !native {
		return false, nil
	}
	spec := a.restoreSpec(into, m.Tags)
	src := loc
	src.Prefix = importPrefix(loc, m)
	imp, err := x.ImportTable(ctx, spec, src)
	if errors.Is(err, storage.ErrUnsupported) && a.opts.Method != MethodNative {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if imp.Errors != 0 || imp.Items != m.ItemCount {
		return true, fmt.Errorf("%w: import %s wrote %d items with %d errors, the archive holds %d", ErrMismatch, imp.ARN, imp.Items, imp.Errors, m.ItemCount)
	}
	a.opts.Progress(int(imp.Items))
	return true, nil
}

// joinKey joins a prefix and a key with a slash.
func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "/" + key
}

// gzipEmpty reports whether err is what gzip.NewReader says of a stream
// of no bytes at all: an export's data of no files, or of empty ones.
func gzipEmpty(err error) bool { return errors.Is(err, io.EOF) }
