package archive

import (
	"bufio"
	"cmp"
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

	"github.com/timetabledb/timetable/engine/chunk"
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

// parquetLayout reports whether m's table has what the Parquet layout
// needs: its family and period.
func (m Manifest) parquetLayout() bool {
	return m.Family != "" && m.PeriodStart != "" && pathSegment.MatchString(m.Family) && m.Family != "." && m.Family != ".."
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
// it will hold; so the items of a part are gathered in a spool of NDJSON
// in Options.TempDir, and when the part is full the spool is read twice,
// to learn the schema and to write the file, which is streamed to the
// target (target.create). The file is written sorted by tenant, logical
// table, series and time, in row groups of ParquetRowGroupRows, so that
// the archive reader (Reader) reads a series' time range from a few row groups:
// the part keeps a sort key of each event (sortedEvent, 32 bytes, and
// each series' name once), and reads each item again from the spool at its
// offset. Disk holds one part's spool, memory its sort keys and one row
// group, whatever the table's size.
type parquetParts struct {
	a      *Archiver
	m      Manifest
	shards int
	// files are the parts written, in order.
	files []ParquetFile

	spool  *os.File
	bw     *bufio.Writer
	off    int64 // the spool's size
	events int64 // events in the spool
	keys   []sortedEvent
	// groups are the part's partitions of events (tenant, table,
	// series), numbered in groupOf.
	groups  []eventGroup
	groupOf map[eventGroup]uint32
	buf     []itemenc.TableEvent
}

// eventGroup is the tenant, logical table and series of events.
type eventGroup struct{ tenant, table, series string }

// sortedEvent is where an event of a part sorts, and where its item is in
// the spool: at off, n bytes, its event idx (of itemenc.ItemEvents). It
// takes 32 bytes.
type sortedEvent struct {
	nanos  int64
	off    int64
	group  uint32
	n, idx int32
}

// compareSorted orders the events of a part: by tenant, table, series and
// time, then as the spool holds them.
func (p *parquetParts) compareSorted(a, b sortedEvent) int {
	if a.group != b.group {
		ga, gb := p.groups[a.group], p.groups[b.group]
		return cmp.Or(strings.Compare(ga.tenant, gb.tenant), strings.Compare(ga.table, gb.table), strings.Compare(ga.series, gb.series))
	}
	return cmp.Or(cmp.Compare(a.nanos, b.nanos), cmp.Compare(a.off, b.off), cmp.Compare(a.idx, b.idx))
}

// ParquetRowGroupRows is the most rows of a row group of an archive's
// Parquet: small enough that a query of one series and an hour reads a
// few row groups, large enough that their statistics stay a small part
// of the file.
const ParquetRowGroupRows = 4096

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
	var err error
	if p.buf, err = chunk.ItemEvents(p.buf[:0], item, p.m.idScheme()); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if len(p.buf) == 0 {
		return nil
	}
	if p.spool == nil {
		f, err := createScratch(p.a.opts.TempDir, "timetable-archive-*.ndjson")
		if err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
		p.spool, p.bw, p.off, p.groupOf = f, bufio.NewWriterSize(f, 1<<16), 0, map[eventGroup]uint32{}
	}
	p.bw.Write(line)
	if err := p.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	for i, e := range p.buf {
		p.keys = append(p.keys, sortedEvent{
			group: p.group(e.Tenant, e.Table, e.Series),
			nanos: e.Time.UnixNano(), off: p.off, n: int32(len(line)), idx: int32(i),
		})
	}
	p.off += int64(len(line)) + 1
	p.events += int64(len(p.buf))
	if p.events >= p.a.opts.ParquetPartRows {
		return p.flush(context.WithoutCancel(ctx), false)
	}
	return nil
}

// group returns the number of a partition of events of the part.
func (p *parquetParts) group(tenant, table, series string) uint32 {
	if g, ok := p.groupOf[eventGroup{tenant, table, series}]; ok {
		return g
	}
	g := eventGroup{strings.Clone(tenant), strings.Clone(table), strings.Clone(series)}
	p.groupOf[g] = uint32(len(p.groups))
	p.groups = append(p.groups, g)
	return uint32(len(p.groups) - 1)
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
	w := parquetfile.NewWriterRowGroups(cw, learner.Schema(), ParquetRowGroupRows)
	err = p.eachSorted(func(e itemenc.TableEvent) error { return w.Write(e.Tenant, e.Table, e.Event) })
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
	p.spool, p.bw, p.events, p.keys, p.groups, p.groupOf = nil, nil, 0, nil, nil, nil
	return closeScratch(f)
}

// eachEvent calls fn with every event of the spool, in the order of the
// spool, decoded as the engine decodes items (chunk.ItemEvents, which decodes chunks and hands other items to itemenc.ItemEvents).
func (p *parquetParts) eachEvent(fn func(itemenc.TableEvent) error) error {
	if p.spool == nil {
		return nil
	}
	if err := p.bw.Flush(); err != nil {
		return err
	}
	sc := bufio.NewScanner(io.NewSectionReader(p.spool, 0, p.off))
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	var buf []itemenc.TableEvent
	for sc.Scan() {
		it, err := UnmarshalItem(sc.Bytes())
		if err != nil {
			return err
		}
		if buf, err = chunk.ItemEvents(buf[:0], it, p.m.idScheme()); err != nil {
			return err
		}
		for _, e := range buf {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// eachSorted calls fn with every event of the spool in the order of the
// Parquet file (compareSorted), reading each item again at its offset.
func (p *parquetParts) eachSorted(fn func(itemenc.TableEvent) error) error {
	if p.spool == nil {
		return nil
	}
	if err := p.bw.Flush(); err != nil {
		return err
	}
	slices.SortFunc(p.keys, p.compareSorted)
	var (
		line   []byte
		buf    []itemenc.TableEvent
		cached = int64(-1)
	)
	for _, k := range p.keys {
		if k.off != cached {
			line = slices.Grow(line[:0], int(k.n))[:k.n]
			if _, err := p.spool.ReadAt(line, k.off); err != nil {
				return err
			}
			it, err := UnmarshalItem(line)
			if err != nil {
				return err
			}
			if buf, err = chunk.ItemEvents(buf[:0], it, p.m.idScheme()); err != nil {
				return err
			}
			cached = k.off
		}
		if int(k.idx) >= len(buf) {
			return fmt.Errorf("item at %d of the spool holds %d events, not %d", k.off, len(buf), k.idx+1)
		}
		if err := fn(buf[k.idx]); err != nil {
			return err
		}
	}
	return nil
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
		if diff := diffParquet(got, p); diff != "" {
			return fmt.Errorf("%w: Parquet file %s %s", ErrMismatch, p.Key, diff)
		}
		rows += got.Rows
	}
	if rows != events {
		return fmt.Errorf("%w: the Parquet files hold %d rows, the data file %d events", ErrMismatch, rows, events)
	}
	return nil
}

// diffParquet says how a Parquet file read (got) differs from what the
// manifest says of it (want): its size, SHA-256 and row count, a zero
// field of got left out. It returns "" when they agree.
func diffParquet(got, want ParquetFile) string {
	var diffs []string
	if got.Bytes != want.Bytes {
		diffs = append(diffs, fmt.Sprintf("is %d bytes, the manifest says %d", got.Bytes, want.Bytes))
	}
	if got.SHA256 != "" && got.SHA256 != want.SHA256 {
		diffs = append(diffs, fmt.Sprintf("SHA-256 is %s, the manifest says %s", short(got.SHA256), short(want.SHA256)))
	}
	if got.Rows >= 0 && got.Rows != want.Rows {
		diffs = append(diffs, fmt.Sprintf("holds %d rows, the manifest says %d", got.Rows, want.Rows))
	}
	return strings.Join(diffs, "; ")
}

// readParquet fetches a Parquet file into a temporary file, hashing it on
// the way, and counts its rows.
func (a *Archiver) readParquet(ctx context.Context, key string) (p ParquetFile, err error) {
	r, err := a.target.get(ctx, key)
	if err != nil {
		return ParquetFile{}, fmt.Errorf("read back: %w", err)
	}
	defer r.Close()
	f, err := createScratch(a.opts.TempDir, "timetable-verify-*.parquet")
	if err != nil {
		return ParquetFile{}, fmt.Errorf("read back %s: %w", key, err)
	}
	defer func() { err = errors.Join(err, closeScratch(f)) }()
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
