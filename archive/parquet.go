package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
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

// parquetKey returns the key of the Parquet file of m's archive: hive
// partitions by family, period and write month, so that query engines
// read only the periods a query names; shards is the table's shard count.
func parquetKey(m Manifest, shards int) (string, error) {
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
	return fmt.Sprintf("%s/period=%s/write_month=%s/%s-g%d-s%d-%d.parquet",
		m.Family, m.PeriodStart, wm, m.Table, m.generation(), 0, max(shards, 1)-1), nil
}

// shardsOf returns a table's shard count as its tags record it: 1 when
// they do not.
func shardsOf(info storage.TableInfo) int {
	if n, err := strconv.Atoi(info.Tags[family.TagShards]); err == nil && n > 0 {
		return n
	}
	return 1
}

// writeParquet writes the events of a complete NDJSON data file, spool,
// as the Parquet file of m's archive, and returns what the manifest
// records of it. It reads spool twice, to learn the schema and then to
// write, so that every column fits every value and memory holds one row
// group, never the table.
func (a *Archiver) writeParquet(ctx context.Context, m Manifest, shards int, spool *os.File) (p ParquetFile, err error) {
	key, err := parquetKey(m, shards)
	if err != nil {
		return ParquetFile{}, err
	}
	learner := parquetfile.NewLearner(parquetfile.Options{Origin: true})
	if err := eachEvent(spool, func(e itemenc.TableEvent) error { learner.Learn(e.Fields); return nil }); err != nil {
		return ParquetFile{}, fmt.Errorf("parquet: %w", err)
	}
	f, err := os.CreateTemp(a.opts.TempDir, "timetable-archive-*.parquet")
	if err != nil {
		return ParquetFile{}, fmt.Errorf("parquet: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close(), os.Remove(f.Name())) }()
	sum := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, sum)}
	w := parquetfile.NewWriter(cw, learner.Schema())
	if err := eachEvent(spool, func(e itemenc.TableEvent) error { return w.Write(e.Tenant, e.Table, e.Event) }); err != nil {
		return ParquetFile{}, fmt.Errorf("parquet: %w", err)
	}
	if err := w.Close(); err != nil {
		return ParquetFile{}, err
	}
	if err := seekStart(f); err != nil {
		return ParquetFile{}, fmt.Errorf("parquet: %w", err)
	}
	if err := a.target.put(ctx, key, f, cw.n); err != nil {
		return ParquetFile{}, fmt.Errorf("parquet: %w", err)
	}
	return ParquetFile{Key: key, Rows: w.Rows(), Bytes: cw.n, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// eachEvent calls fn with every event of an NDJSON data file, decoded as
// the engine decodes items (itemenc.ItemEvents).
func eachEvent(spool *os.File, fn func(itemenc.TableEvent) error) error {
	if err := seekStart(spool); err != nil {
		return err
	}
	var buf []itemenc.TableEvent
	return readItems(spool, nil, func(it storage.Item) error {
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
// Parquet library, against the manifest and against events, the number
// of events in the archive's data file.
func (a *Archiver) verifyParquet(ctx context.Context, m Manifest, events int64) error {
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
		if got.Rows != p.Rows || got.Rows != events {
			diffs = append(diffs, fmt.Sprintf("holds %d rows, the manifest says %d, the data file holds %d events", got.Rows, p.Rows, events))
		}
		if len(diffs) > 0 {
			return fmt.Errorf("%w: Parquet file %s %s", ErrMismatch, p.Key, strings.Join(diffs, "; "))
		}
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
