package chunk

import (
	"fmt"
	"math"
	"slices"
)

// Columns is what an aggregate reads of a chunk: its events' times and
// the columns of the fields it sums, decoded from the block without
// making an event or a map of fields (ReadColumns). A Columns is reused
// from chunk to chunk: ReadColumns keeps its slices' memory.
type Columns struct {
	// Times holds every event's time in Unix nanoseconds, in block
	// order, which is time order.
	Times []int64
	// Fields holds a column per field asked for, in the order asked.
	Fields []Column
	block  []byte // the last block decompressed, for its memory
}

// Column is one field's values in a chunk: those of the events that
// have it, in block order, in one of Ints, Floats or Values by the
// column's kind.
type Column struct {
	// Present says which events have the field: nil when every event
	// does, else a bitmap of the block's events (event i is bit i%8 of
	// byte i/8), all zero when none does.
	Present []byte
	// Ints holds the values of a column of integers: each is the number
	// whose canonical text strconv.FormatInt gives.
	Ints []int64
	// Floats holds the values of a column of floats: each is the number
	// whose canonical text strconv.FormatFloat(f, 'f', -1, 64) gives.
	Floats []float64
	// Values holds the values of any other column, as Unpack reads them
	// back.
	Values []any
	// Kind says which of Ints, Floats and Values holds the values.
	Kind ColumnKind
}

// ColumnKind is how a Column holds its values.
type ColumnKind uint8

// Kinds of Column.
const (
	ColumnInts ColumnKind = iota
	ColumnFloats
	ColumnValues
)

// Has reports whether event i has the field.
func (c *Column) Has(i int) bool { return c.Present == nil || c.Present[i/8]&(1<<(i%8)) != 0 }

// ReadColumns reads into dst the times of the events of a chunk, whose
// stored form (its item's AttrData) is data, and the columns of fields
// (a field no event has is a column with no values), decoding the
// block's columns as Unpack does, without its events. data is not kept.
// A chunk that cannot be read is an error wrapping ErrCorrupt.
func ReadColumns(dst *Columns, data []byte, fields []string) error {
	block, err := decompressTo(dst.block, data)
	if err != nil {
		return err
	}
	if len(data) > 0 && data[0] == storedZstd {
		dst.block = block
	}
	r := reader{b: block}
	if v := r.byte(); r.err == nil && v != blockVersion {
		return fmt.Errorf("%w: block version %d", ErrCorrupt, v)
	}
	n := r.count(1)
	if r.err != nil {
		return r.err
	}
	dst.Times = dst.Times[:0]
	r.times(n, func(_ int, t int64) { dst.Times = append(dst.Times, t) })
	r.ids(n, func(int, []byte) {})
	dst.Fields = slices.Grow(dst.Fields[:0], len(fields))[:len(fields)]
	for i := range dst.Fields {
		c := &dst.Fields[i]
		c.Present = append(c.Present[:0], make([]byte, (n+7)/8)...) // none, until the block has the field
		c.Ints, c.Floats, c.Values, c.Kind = c.Ints[:0], c.Floats[:0], nil, ColumnValues
	}
	nf := r.count(4)
	for f := 0; f < nf && r.err == nil; f++ {
		fd := r.field(n)
		at := slices.IndexFunc(fields, func(name string) bool { return name == string(fd.name) })
		if r.err != nil || at < 0 {
			continue
		}
		c := &dst.Fields[at]
		if fd.bitmap == nil {
			c.Present = nil
		} else {
			copy(c.Present, fd.bitmap)
		}
		if err := c.read(fd); err != nil {
			return fmt.Errorf("field %q: %w", fd.name, err)
		}
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the last field", ErrCorrupt, len(r.b))
	}
	return nil
}

// read decodes the column of a field's entry by its kind: integers and
// floats as numbers, any other kind as readColumn reads it.
func (c *Column) read(fd blockField) error {
	switch fd.kind {
	case kindInt:
		r := reader{b: fd.col}
		c.Kind = ColumnInts
		r.ints(fd.m, func(v int64) { c.Ints = append(c.Ints, v) })
		if r.err != nil {
			return r.err
		}
		if len(c.Ints) != fd.m {
			return fmt.Errorf("%w: column of %d values, %d expected", ErrCorrupt, len(c.Ints), fd.m)
		}
	case kindFloat:
		bits, ok := readXOR(fd.col, fd.m)
		if !ok {
			return fmt.Errorf("%w: float column", ErrCorrupt)
		}
		c.Kind = ColumnFloats
		for _, b := range bits {
			c.Floats = append(c.Floats, math.Float64frombits(b))
		}
	default:
		vals, err := readColumn(fd.kind, fd.col, fd.m)
		if err != nil {
			return err
		}
		c.Kind, c.Values = ColumnValues, vals
	}
	return nil
}
