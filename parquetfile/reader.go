package parquetfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// File is a Parquet file of events opened for reading, as Writer wrote it
// with Options.Origin (an archive's file): the cold tier of package
// archive reads archived events from it.
//
// The columns are read back as the writer typed them: an int64 or
// DECIMAL column as the canonical number it was written from, a string,
// boolean or binary column as such, and fields_json as JSON with every
// number kept as written. Three things do not read back as they were
// stored: a field whose value was null in a typed column (absent in the
// file, so absent when read), a double column's numbers (15 to 17
// significant digits, written in the shortest form that reads back as
// the same double), and binary values inside fields_json (base64
// strings).
//
// A File may be used by several goroutines at once.
type File struct {
	f    *parquet.File
	cols []readColumn
	// pos of the columns every file has; -1 when the file lacks one.
	tenant, table, time, series, id, json int
}

// readColumn is how a leaf column is read.
type readColumn struct {
	name  string
	kind  Kind
	scale int
}

// OpenFile opens a Parquet file that Writer wrote.
func OpenFile(r io.ReaderAt, size int64) (*File, error) {
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("parquet: open: %w", err)
	}
	f := &File{f: pf, tenant: -1, table: -1, time: -1, series: -1, id: -1, json: -1}
	for _, el := range pf.Metadata().Schema[1:] {
		c := readColumn{name: el.Name}
		typ, leaf := el.Type.Get()
		switch {
		case !leaf:
			return nil, fmt.Errorf("parquet: column %q is a group: not a file of events", el.Name)
		case typ == format.Boolean:
			c.kind = Bool
		case typ == format.Int64:
			c.kind = Int64
		case typ == format.Double:
			c.kind = Double
		case typ == format.FixedLenByteArray:
			c.kind, c.scale = Decimal, int(el.Scale.V)
		case typ == format.ByteArray:
			c.kind = Binary
			switch el.LogicalType.Value.(type) {
			case *format.StringType:
				c.kind = String
			case *format.JsonType:
				c.kind = JSON
			}
		default:
			return nil, fmt.Errorf("parquet: column %q of type %s: not a file of events", el.Name, typ)
		}
		i := len(f.cols)
		switch el.Name {
		case ColTenant:
			f.tenant = i
		case ColTable:
			f.table = i
		case ColTime:
			f.time = i
		case ColSeries:
			f.series = i
		case ColID:
			f.id = i
		case ColFieldsJSON:
			f.json = i
		}
		f.cols = append(f.cols, c)
	}
	if f.tenant < 0 || f.table < 0 || f.time < 0 || f.series < 0 || f.id < 0 {
		return nil, errors.New("parquet: the file lacks the tenant, table, time, series or id column: not an archive's file of events")
	}
	return f, nil
}

// NumRows returns the number of rows of the file.
func (f *File) NumRows() int64 { return f.f.NumRows() }

// Selection is the events File.Events reads: one tenant's logical table,
// one series, in the closed range [From, To] of times.
type Selection struct {
	Tenant, Table, Series string
	From, To              time.Time
}

// Events calls fn with every event of the selection, in the file's
// order, until fn returns an error. It reads only the row groups whose
// statistics (the least and greatest tenant, table, series and time) may
// hold such events: a file sorted by tenant, table, series and time, as
// the archive writes it, is read a few row groups at most. Of a row group
// it reads, it reads the key columns (tenant, table, series, time; those
// whose statistics say every row holds the selection's value not at
// all), and then whole rows only where they are the selection's: the
// row group of 4,096 rows that holds an hour of one series is read as
// its 60 rows, not as 4,096. The event's fields are fn's to keep.
func (f *File) Events(sel Selection, fn func(event.Event) error) error {
	_, err := f.events(sel, fn)
	return err
}

// events is Events, which also returns how many rows it read whole.
func (f *File) events(sel Selection, fn func(event.Event) error) (read int, err error) {
	from, to := sel.From.UnixNano(), sel.To.UnixNano()
	md := f.f.Metadata()
	rows := make([]parquet.Row, 256)
	for g, rg := range f.f.RowGroups() {
		if g < len(md.RowGroups) && !f.mayHold(md.RowGroups[g], sel, from, to) {
			continue
		}
		var meta *format.RowGroup
		if g < len(md.RowGroups) {
			meta = &md.RowGroups[g]
		}
		spans, err := f.spans(rg, meta, sel, from, to)
		if err != nil {
			return read, err
		}
		if len(spans) == 0 {
			continue
		}
		rr := rg.Rows()
		for _, sp := range spans {
			if err := rr.SeekToRow(sp.start); err != nil {
				rr.Close()
				return read, fmt.Errorf("parquet: seek to row %d: %w", sp.start, err)
			}
			for left := sp.end - sp.start; left > 0; {
				n, err := rr.ReadRows(rows[:min(int64(len(rows)), left)])
				read += n
				left -= int64(n)
				for _, row := range rows[:n] {
					e, ok, cerr := f.event(row, sel, from, to)
					if cerr != nil {
						rr.Close()
						return read, cerr
					}
					if ok {
						if err := fn(e); err != nil {
							rr.Close()
							return read, err
						}
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					rr.Close()
					return read, fmt.Errorf("parquet: read rows: %w", err)
				}
				if n == 0 {
					rr.Close()
					return read, fmt.Errorf("parquet: read rows: no row at %d of a row group of %d", sp.end-left, rg.NumRows())
				}
			}
		}
		if err := rr.Close(); err != nil {
			return read, fmt.Errorf("parquet: read rows: %w", err)
		}
	}
	return read, nil
}

// rowSpan is the rows [start, end) of a row group.
type rowSpan struct{ start, end int64 }

// spans returns the runs of rows of a row group that hold events of the
// selection, by its key columns alone: one run in a file sorted as the
// archive writes it. A key column whose statistics (meta, when not nil)
// say that every row holds the selection's value is not read.
func (f *File) spans(rg parquet.RowGroup, meta *format.RowGroup, sel Selection, from, to int64) ([]rowSpan, error) {
	type keyColumn struct {
		values *columnValues
		match  func(parquet.Value) bool
	}
	str := func(want string) func(parquet.Value) bool {
		return func(v parquet.Value) bool { return !v.IsNull() && string(v.ByteArray()) == want }
	}
	chunks := rg.ColumnChunks()
	var keys []keyColumn
	for _, k := range []struct {
		col   int
		match func(parquet.Value) bool
		only  string
	}{
		{f.tenant, str(sel.Tenant), sel.Tenant},
		{f.table, str(sel.Table), sel.Table},
		{f.series, str(sel.Series), sel.Series},
		{f.time, func(v parquet.Value) bool { return !v.IsNull() && v.Int64() >= from && v.Int64() <= to }, ""},
	} {
		if k.only != "" && meta != nil && f.holdsOnly(*meta, k.col, k.only) {
			continue
		}
		keys = append(keys, keyColumn{values: newColumnValues(chunks[k.col]), match: k.match})
	}
	var spans []rowSpan
	err := func() error {
		for r := range rg.NumRows() {
			in := true
			for _, k := range keys {
				v, err := k.values.next()
				if err != nil {
					return fmt.Errorf("parquet: read column: %w", err)
				}
				in = in && k.match(v)
			}
			switch {
			case !in:
			case len(spans) > 0 && spans[len(spans)-1].end == r:
				spans[len(spans)-1].end = r + 1
			default:
				spans = append(spans, rowSpan{r, r + 1})
			}
		}
		return nil
	}()
	for _, k := range keys {
		err = errors.Join(err, k.values.close())
	}
	return spans, err
}

// holdsOnly reports whether the statistics of a string column of a row
// group say that every row holds v: no null, and v its least and
// greatest value.
func (f *File) holdsOnly(rg format.RowGroup, col int, v string) bool {
	if col >= len(rg.Columns) {
		return false
	}
	st := rg.Columns[col].MetaData.Statistics
	return st.MinValue != nil && st.MaxValue != nil && st.NullCount == 0 && string(st.MinValue) == v && string(st.MaxValue) == v
}

// Series returns the series of a tenant's logical table in the file,
// sorted. It reads the tenant, table and series columns of the row
// groups that may hold the table, and no other.
func (f *File) Series(tenant, table string) ([]string, error) {
	if f.tenant < 0 || f.table < 0 || f.series < 0 {
		return []string{}, nil
	}
	md := f.f.Metadata()
	seen := map[string]bool{}
	all := Selection{Tenant: tenant, Table: table}
	for g, rg := range f.f.RowGroups() {
		if g < len(md.RowGroups) && !f.mayHoldTable(md.RowGroups[g], all) {
			continue
		}
		chunks := rg.ColumnChunks()
		cols := [3]*columnValues{newColumnValues(chunks[f.tenant]), newColumnValues(chunks[f.table]), newColumnValues(chunks[f.series])}
		err := func() error {
			for range rg.NumRows() {
				var v [3]parquet.Value
				for i, c := range cols {
					var err error
					if v[i], err = c.next(); err != nil {
						return fmt.Errorf("parquet: read column: %w", err)
					}
				}
				if string(v[0].ByteArray()) == tenant && string(v[1].ByteArray()) == table && !seen[string(v[2].ByteArray())] {
					seen[string(v[2].ByteArray())] = true
				}
			}
			return nil
		}()
		for _, c := range cols {
			err = errors.Join(err, c.close())
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

// columnValues reads the values of one leaf column of a row group in row
// order, a page at a time: a column of one value per row (no repeated
// field), as every column the writer writes is.
type columnValues struct {
	pages parquet.Pages
	vals  parquet.ValueReader
	buf   []parquet.Value
	i, n  int
}

func newColumnValues(c parquet.ColumnChunk) *columnValues {
	return &columnValues{pages: c.Pages(), buf: make([]parquet.Value, 256)}
}

// next returns the column's next value; io.ErrUnexpectedEOF when the
// column ends first.
func (c *columnValues) next() (parquet.Value, error) {
	for c.i >= c.n {
		if c.vals == nil {
			p, err := c.pages.ReadPage()
			if err == io.EOF {
				return parquet.Value{}, io.ErrUnexpectedEOF
			}
			if err != nil {
				return parquet.Value{}, err
			}
			c.vals = p.Values()
		}
		n, err := c.vals.ReadValues(c.buf)
		c.i, c.n = 0, n
		if err == io.EOF {
			c.vals = nil
		} else if err != nil {
			return parquet.Value{}, err
		}
	}
	v := c.buf[c.i]
	c.i++
	return v, nil
}

func (c *columnValues) close() error {
	return c.pages.Close()
}

// mayHoldTable reports whether a row group's statistics allow events of
// the selection's tenant and table.
func (f *File) mayHoldTable(rg format.RowGroup, sel Selection) bool {
	return f.strMayHold(rg, f.tenant, sel.Tenant) && f.strMayHold(rg, f.table, sel.Table)
}

// strMayHold reports whether the statistics of a string column of a row
// group allow v. A column without statistics allows any.
func (f *File) strMayHold(rg format.RowGroup, col int, v string) bool {
	if col >= len(rg.Columns) {
		return true
	}
	st := rg.Columns[col].MetaData.Statistics
	if st.MinValue == nil || st.MaxValue == nil {
		return true
	}
	return string(st.MinValue) <= v && v <= string(st.MaxValue)
}

// mayHold reports whether a row group's statistics allow events of the
// selection. A column without statistics allows any.
func (f *File) mayHold(rg format.RowGroup, sel Selection, from, to int64) bool {
	if !f.mayHoldTable(rg, sel) || !f.strMayHold(rg, f.series, sel.Series) {
		return false
	}
	if f.time >= len(rg.Columns) {
		return true
	}
	st := rg.Columns[f.time].MetaData.Statistics
	if len(st.MinValue) != 8 || len(st.MaxValue) != 8 {
		return true
	}
	lo, hi := int64(binary.LittleEndian.Uint64(st.MinValue)), int64(binary.LittleEndian.Uint64(st.MaxValue))
	return lo <= to && from <= hi
}

// event returns the event of a row, and whether it is in the selection.
func (f *File) event(row parquet.Row, sel Selection, from, to int64) (event.Event, bool, error) {
	var e event.Event
	for _, v := range row {
		c := v.Column()
		switch c {
		case f.tenant:
			if !bytes.Equal(v.ByteArray(), []byte(sel.Tenant)) {
				return e, false, nil
			}
		case f.table:
			if !bytes.Equal(v.ByteArray(), []byte(sel.Table)) {
				return e, false, nil
			}
		case f.series:
			if !bytes.Equal(v.ByteArray(), []byte(sel.Series)) {
				return e, false, nil
			}
		case f.time:
			if n := v.Int64(); n < from || n > to {
				return e, false, nil
			}
		}
	}
	for _, v := range row {
		c := v.Column()
		switch {
		case c == f.time:
			e.Time = time.Unix(0, v.Int64()).UTC()
		case c == f.series:
			e.Series = sel.Series
		case c == f.id:
			e.ID = string(v.ByteArray())
		case c == f.tenant || c == f.table || v.IsNull() || c < 0 || c >= len(f.cols):
		case c == f.json:
			d := json.NewDecoder(bytes.NewReader(v.ByteArray()))
			d.UseNumber()
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				return e, false, fmt.Errorf("parquet: event %s: fields_json: %w", e.ID, err)
			}
			for name, x := range m {
				if e.Fields == nil {
					e.Fields = map[string]any{}
				}
				e.Fields[name] = x
			}
		default:
			col := f.cols[c]
			x, err := col.value(v)
			if err != nil {
				return e, false, fmt.Errorf("parquet: column %q: %w", col.name, err)
			}
			if e.Fields == nil {
				e.Fields = map[string]any{}
			}
			e.Fields[col.name] = x
		}
	}
	return e, true, nil
}

// value returns the storage value of a field column's value.
func (c readColumn) value(v parquet.Value) (any, error) {
	switch c.kind {
	case Bool:
		return v.Boolean(), nil
	case String:
		return string(v.ByteArray()), nil
	case Binary:
		return bytes.Clone(v.ByteArray()), nil
	case Int64:
		return json.Number(strconv.FormatInt(v.Int64(), 10)), nil
	case Double:
		return storage.CanonicalNumber(strconv.FormatFloat(v.Double(), 'g', -1, 64))
	case Decimal:
		return decimalNumber(v.ByteArray(), c.scale)
	}
	return nil, fmt.Errorf("no value of kind %s", c.kind)
}

// decimalNumber returns the canonical number of a DECIMAL value: a
// big-endian two's complement integer, unscaled by scale.
func decimalNumber(b []byte, scale int) (json.Number, error) {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	s := u.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return storage.CanonicalNumber(s)
}
