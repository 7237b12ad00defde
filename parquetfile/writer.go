package parquetfile

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/timetabledb/timetable/event"
)

// DefaultRowGroupRows is the rows of a row group: at most that many rows
// are held in memory, compressed column by column.
const DefaultRowGroupRows = 64 << 10

// decimalBytes is the width of a DECIMAL column's values: 16 bytes hold
// 38 digits.
const decimalBytes = 16

// rowBatch is the rows a Writer builds before handing them to parquet-go.
const rowBatch = 256

// Writer writes events to a Parquet file under a Schema.
type Writer struct {
	s     *Schema
	w     *parquet.Writer
	b     *parquet.RowBuilder
	rows  []parquet.Row
	count int64
	// jsonFields collects a row's fields_json object.
	jsonFields map[string]any
}

// NewWriter starts a file in w. Close must be called to finish it.
func NewWriter(w io.Writer, s *Schema) *Writer { return NewWriterRowGroups(w, s, DefaultRowGroupRows) }

// NewWriterRowGroups starts a file in w whose row groups hold at most
// rows rows (DefaultRowGroupRows when rows <= 0): small row groups of a
// sorted file let a reader skip by their statistics (File.Events).
func NewWriterRowGroups(w io.Writer, s *Schema, rows int) *Writer {
	if rows <= 0 {
		rows = DefaultRowGroupRows
	}
	return &Writer{
		s: s,
		w: parquet.NewWriter(w, s.node,
			parquet.Compression(&parquet.Zstd),
			parquet.MaxRowsPerRowGroup(int64(rows)),
			parquet.CreatedBy("timetable", "", "")),
		b:          parquet.NewRowBuilder(s.node),
		jsonFields: map[string]any{},
	}
}

// Rows returns the number of rows written so far.
func (w *Writer) Rows() int64 { return w.count }

// Write adds one event; tenant and table are written only to a schema with
// Options.Origin.
func (w *Writer) Write(tenant, table string, e event.Event) error {
	b := w.b
	b.Reset()
	col := 0
	if w.s.origin {
		b.Add(0, parquet.ByteArrayValue([]byte(tenant)))
		b.Add(1, parquet.ByteArrayValue([]byte(table)))
		col = 2
	}
	b.Add(col, parquet.Int64Value(e.Time.UnixNano()))
	b.Add(col+1, parquet.ByteArrayValue([]byte(e.Series)))
	b.Add(col+2, parquet.ByteArrayValue([]byte(e.ID)))
	clear(w.jsonFields)
	for name, v := range e.Fields {
		c, typed := w.s.typed[name]
		if !typed {
			w.jsonFields[name] = v
			continue
		}
		if v == nil {
			continue
		}
		pv, ok := value(c.Column, v)
		if !ok {
			w.jsonFields[name] = v
			continue
		}
		b.Add(c.pos, pv)
	}
	if len(w.jsonFields) > 0 {
		j, err := json.Marshal(w.jsonFields)
		if err != nil {
			return fmt.Errorf("parquet: event %s: fields_json: %w", e.ID, err)
		}
		b.Add(w.s.jsonPos, parquet.ByteArrayValue(j))
	}
	w.rows = append(w.rows, b.Row())
	w.count++
	if len(w.rows) == rowBatch {
		return w.flushRows()
	}
	return nil
}

func (w *Writer) flushRows() error {
	if len(w.rows) == 0 {
		return nil
	}
	if _, err := w.w.WriteRows(w.rows); err != nil {
		return fmt.Errorf("parquet: write rows: %w", err)
	}
	w.rows = w.rows[:0]
	return nil
}

// Close writes the rows still held and the file's footer. It does not
// close the io.Writer.
func (w *Writer) Close() error {
	if err := w.flushRows(); err != nil {
		return err
	}
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("parquet: close: %w", err)
	}
	return nil
}

// value converts a storage value to its column's Parquet value; ok is
// false when it does not fit the column.
func value(c Column, v any) (parquet.Value, bool) {
	switch c.Kind {
	case String:
		s, ok := v.(string)
		return parquet.ByteArrayValue([]byte(s)), ok && utf8.ValidString(s)
	case Bool:
		b, ok := v.(bool)
		return parquet.BooleanValue(b), ok
	case Binary:
		b, ok := v.([]byte)
		return parquet.ByteArrayValue(b), ok
	}
	num, ok := v.(json.Number)
	if !ok {
		return parquet.Value{}, false
	}
	n, ok := parseNumber(num)
	if !ok {
		return parquet.Value{}, false
	}
	switch c.Kind {
	case Int64:
		return parquet.Int64Value(n.i64), n.isInt64
	case Decimal:
		if len(n.intPart) > c.Precision-c.Scale || len(n.frac) > c.Scale {
			return parquet.Value{}, false
		}
		return parquet.FixedLenByteArrayValue(unscaled(n, c.Scale)), true
	case Double:
		f, err := strconv.ParseFloat(string(num), 64)
		return parquet.DoubleValue(f), err == nil
	}
	return parquet.Value{}, false
}

// twoTo128 is 2^128, which turns a negative 128-bit integer into its two's
// complement.
var twoTo128 = new(big.Int).Lsh(big.NewInt(1), 128)

// unscaled returns n times 10^scale as a 16-byte big-endian two's
// complement integer, a DECIMAL value of that scale.
func unscaled(n number, scale int) []byte {
	u, _ := new(big.Int).SetString("0"+n.intPart+n.frac+strings.Repeat("0", scale-len(n.frac)), 10)
	if n.neg {
		u.Sub(twoTo128, u)
	}
	return u.FillBytes(make([]byte, decimalBytes))
}

// CountRows returns the number of rows of a Parquet file, read from its
// footer, after checking that the file opens as Parquet.
func CountRows(r io.ReaderAt, size int64) (int64, error) {
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return 0, fmt.Errorf("parquet: open: %w", err)
	}
	return f.NumRows(), nil
}
