package archive

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/parquetfile"
	"github.com/timetabledb/timetable/storage"
)

// ParquetFile is a Parquet file of an archive: the table's events, typed,
// for query engines (package parquetfile).
type ParquetFile struct {
	// Key is the file's key under the target's root:
	// {family}/period={start}/write_month={YYYY-MM}/{table}-g{generation}-s{first}-{last}.parquet.
	Key string `json:"key"`
	// Rows is the number of events, one a row.
	Rows int64 `json:"rows"`
	// Bytes and SHA256 are the file's size and hex SHA-256.
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// noWriteMonth is the write_month of a table without write-time grouping.
const noWriteMonth = "none"

// pathSegment is what a family name must be to name a folder of the
// target.
var pathSegment = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,255}$`)

// parquetKey returns the key of part n of the Parquet of m's archive:
// hive partitions by family, period and write month, so that query
// engines read only the periods a query names; shards is the table's
// shard count. Part 0 is {table}-g{generation}-s{first}-{last}.parquet,
// part n > 0 the same with -p{n} before .parquet.
func parquetKey(m Manifest, shards, part int) (string, error) {
	if m.Family == "" || m.PeriodStart == "" {
		return "", fmt.Errorf("a Parquet archive is laid out by family and period, and table %q has neither a registry entry nor tags that name them", m.Table)
	}
	if !pathSegment.MatchString(m.Family) || m.Family == "." || m.Family == ".." {
		return "", fmt.Errorf("%w: family %q cannot name a folder", ErrBadTarget, m.Family)
	}
	wm := m.WriteMonth
	if wm == "" {
		wm = noWriteMonth
	}
	suffix := ""
	if part > 0 {
		suffix = fmt.Sprintf("-p%d", part)
	}
	return fmt.Sprintf("%s/period=%s/write_month=%s/%s-g%d-s%d-%d%s.parquet",
		m.Family, m.PeriodStart, wm, m.Table, m.generation(), 0, max(shards, 1)-1, suffix), nil
}

// shardsOf returns a table's shard count as its tags record it: 1 when
// they do not.
func shardsOf(info storage.TableInfo) int {
	if n, err := strconv.Atoi(info.Tags[family.TagShards]); err == nil && n > 0 {
		return n
	}
	return 1
}

// parquetParts writes the Parquet of an export in parts of at most
// Options.ParquetPartRows events. A Parquet file's schema must be known
// before its first row, and a column's type is learnt from every value
// it will hold; so the items of a part are gathered in a spool of
// compressed NDJSON in Options.TempDir, and when the part is full the
// spool is read twice, to learn the schema and to write the file, which
// is streamed to the target (target.create). Disk holds one part's
// spool, memory one row group, whatever the table's size.
type parquetParts struct {
	a      *Archiver
	m      Manifest
	shards int
	// files are the parts written, in order.
	files []ParquetFile

	spool  *os.File
	zw     *gzip.Writer
	events int64 // events in the spool
	buf    []itemenc.TableEvent
}

// newParquetParts starts the Parquet of m's archive after the parts an
// earlier, stopped export wrote.
func (a *Archiver) newParquetParts(m Manifest, shards int, written []ParquetFile) (*parquetParts, error) {
	if _, err := parquetKey(m, shards, 0); err != nil {
		return nil, err
	}
	return &parquetParts{a: a, m: m, shards: shards, files: slices.Clone(written)}, nil
}

// add gathers an item's events, writing the part when it is full.
func (p *parquetParts) add(ctx context.Context, item storage.Item, line []byte) error {
	p.buf = itemenc.ItemEvents(p.buf[:0], item)
	if len(p.buf) == 0 {
		return nil
	}
	if p.spool == nil {
		f, err := os.CreateTemp(p.a.opts.TempDir, "timetable-archive-*.ndjson.gz")
		if err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
		p.spool, p.zw = f, gzip.NewWriter(f)
	}
	p.zw.Write(line)
	if _, err := p.zw.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	p.events += int64(len(p.buf))
	if p.events >= p.a.opts.ParquetPartRows {
		return p.flush(context.WithoutCancel(ctx), false)
	}
	return nil
}

// flush writes the part gathered so far, if it holds any event, or, with
// last and no part written yet, an empty file: an archive in Parquet has
// at least one.
func (p *parquetParts) flush(ctx context.Context, last bool) (err error) {
	if p.events == 0 && !(last && len(p.files) == 0) {
		return p.close()
	}
	defer func() { err = errors.Join(err, p.close()) }()
	key, err := parquetKey(p.m, p.shards, len(p.files))
	if err != nil {
		return err
	}
	learner := parquetfile.NewLearner(parquetfile.Options{Origin: true})
	if err := p.eachEvent(func(e itemenc.TableEvent) error { learner.Learn(e.Fields); return nil }); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	ow, err := p.a.target.create(ctx, key)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	sum := sha256.New()
	cw := &countWriter{w: io.MultiWriter(ow, sum)}
	w := parquetfile.NewWriter(cw, learner.Schema())
	err = p.eachEvent(func(e itemenc.TableEvent) error { return w.Write(e.Tenant, e.Table, e.Event) })
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = ow.Commit()
	}
	if err != nil {
		return errors.Join(fmt.Errorf("parquet: %w", err), ow.Abort())
	}
	p.files = append(p.files, ParquetFile{Key: key, Rows: w.Rows(), Bytes: cw.n, SHA256: hex.EncodeToString(sum.Sum(nil))})
	return nil
}

// close removes the spool.
func (p *parquetParts) close() error {
	if p.spool == nil {
		return nil
	}
	f := p.spool
	p.spool, p.zw, p.events = nil, nil, 0
	return errors.Join(f.Close(), os.Remove(f.Name()))
}

// eachEvent calls fn with every event of the spool, decoded as the
// engine decodes items (itemenc.ItemEvents).
func (p *parquetParts) eachEvent(fn func(itemenc.TableEvent) error) error {
	if p.spool == nil {
		return nil
	}
	if p.zw != nil {
		if err := p.zw.Close(); err != nil {
			return err
		}
		p.zw = nil
	}
	if _, err := p.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var buf []itemenc.TableEvent
	return readItems(p.spool, nil, func(it storage.Item) error {
		buf = itemenc.ItemEvents(buf[:0], it)
		for _, e := range buf {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// verifyParquet reads m's Parquet files back from the target and checks
// each one's size, SHA-256 and row count, read from the file by the
// Parquet library, against the manifest, and the rows of all against
// events, the number of events in the archive's data file.
func (a *Archiver) verifyParquet(ctx context.Context, m Manifest, events int64) error {
	if len(m.Parquet) == 0 {
		return nil
	}
	var rows int64
	for _, p := range m.Parquet {
		got, err := a.readParquet(ctx, p.Key)
		if err != nil {
			return err
		}
		var diffs []string
		if got.Bytes != p.Bytes {
			diffs = append(diffs, fmt.Sprintf("is %d bytes, the manifest says %d", got.Bytes, p.Bytes))
		}
		if got.SHA256 != p.SHA256 {
			diffs = append(diffs, fmt.Sprintf("SHA-256 is %s, the manifest says %s", short(got.SHA256), short(p.SHA256)))
		}
		if got.Rows != p.Rows {
			diffs = append(diffs, fmt.Sprintf("holds %d rows, the manifest says %d", got.Rows, p.Rows))
		}
		if len(diffs) > 0 {
			return fmt.Errorf("%w: Parquet file %s %s", ErrMismatch, p.Key, strings.Join(diffs, "; "))
		}
		rows += got.Rows
	}
	if rows != events {
		return fmt.Errorf("%w: the Parquet files hold %d rows, the data file %d events", ErrMismatch, rows, events)
	}
	return nil
}

// readParquet fetches a Parquet file into a temporary file, hashing it on
// the way, and counts its rows.
func (a *Archiver) readParquet(ctx context.Context, key string) (p ParquetFile, err error) {
	r, err := a.target.get(ctx, key)
	if err != nil {
		return ParquetFile{}, fmt.Errorf("read back: %w", err)
	}
	defer r.Close()
	f, err := os.CreateTemp(a.opts.TempDir, "timetable-verify-*.parquet")
	if err != nil {
		return ParquetFile{}, fmt.Errorf("read back %s: %w", key, err)
	}
	defer func() { err = errors.Join(err, f.Close(), os.Remove(f.Name())) }()
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, sum), r)
	if err != nil {
		return ParquetFile{}, fmt.Errorf("read back %s: %w", key, err)
	}
	rows, err := parquetfile.CountRows(f, n)
	if err != nil {
		return ParquetFile{}, fmt.Errorf("%w: read back %s: %v", ErrMismatch, key, err)
	}
	return ParquetFile{Key: key, Rows: rows, Bytes: n, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}
