package chunk

import (
	"fmt"
	"math"
	"slices"

	"github.com/timetabledb/timetable/event"
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
	block  []byte       // the last block decompressed, for its memory
	bc     blockColumns // the last block parsed, for its memory
	bits   []uint64     // a float column's bits, for their memory
}

// Column is one field's values in a chunk: those of the events that
// have it, in block order, in one of Ints, Floats or Values by the
// column's kind (Ints with Scale for decimals).
type Column struct {
	// Present says which events have the field: nil when every event
	// does, else a bitmap of the block's events (event i is bit i%8 of
	// byte i/8), all zero when none does.
	Present []byte
	// Ints holds the values of a column of integers: each is the number
	// whose canonical text strconv.FormatInt gives; in a column of
	// decimals, each value's mantissa: the number is it times 10^-Scale.
	Ints []int64
	// Scale is the scale of a column of decimals.
	Scale int
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
	ColumnDecimals
)

// Has reports whether event i has the field.
func (c *Column) Has(i int) bool { return c.Present == nil || c.Present[i/8]&(1<<(i%8)) != 0 }

// ReadColumns reads into dst the times of the events of a chunk, whose
// sort key is sk and stored form (its item's AttrData) data, and the
// columns of fields (a field no event has is a column with no values),
// decoding the block's columns as Unpack does, without its events. data
// is not kept. A chunk that cannot be read is an error wrapping
// ErrCorrupt. A version 1 block is read through its events (Unpack): its
// columns are Values.
func ReadColumns(dst *Columns, sk string, data []byte, fields []string) error {
	first, ok := firstTime(sk)
	if !ok {
		return corrupt("sort key %q", sk)
	}
	return ReadColumnsAt(dst, first, data, fields)
}

// ReadColumnsAt is ReadColumns of a chunk whose first event is at first
// (Unix nanoseconds), the time of its sort key, which the caller read.
// It decodes only the columns of fields: the block's other columns are
// checked and passed over.
func ReadColumnsAt(dst *Columns, first int64, data []byte, fields []string) error {
	block, err := decompressTo(dst.block, data)
	if err != nil {
		return err
	}
	if len(data) > 0 && data[0] != storedRaw {
		dst.block = block
	}
	if len(block) == 0 {
		return corrupt("empty block")
	}
	dst.Times = dst.Times[:0]
	dst.Fields = slices.Grow(dst.Fields[:0], len(fields))[:len(fields)]
	switch block[0] {
	case 1:
		evs, err := readBlockV1(nil, block[1:], "")
		if err != nil {
			return err
		}
		dst.fromEvents(evs, fields)
		return nil
	case blockVersion:
	default:
		return corrupt("block version %d", block[0])
	}
	bc := &dst.bc
	// Times takes the parsed times' memory, and gives its own for the
	// next block.
	bc.times = dst.Times[:0]
	if err := parseBlockTo(bc, block[1:], first, false, fields); err != nil {
		return err
	}
	dst.Times = bc.times
	bc.times = nil
	n := len(dst.Times)
	for i, name := range fields {
		c := &dst.Fields[i]
		c.Ints, c.Floats, c.Values, c.Scale = c.Ints[:0], c.Floats[:0], nil, 0
		at := slices.IndexFunc(bc.fields, func(f fieldColumn) bool { return string(f.rawName) == name })
		if at < 0 {
			c.Present = append(c.Present[:0], make([]byte, (n+7)/8)...) // no event has it
			c.Kind = ColumnValues
			continue
		}
		fc := bc.fields[at]
		if fc.present == nil {
			c.Present = nil
		} else {
			c.Present = append(c.Present[:0], fc.present...)
		}
		if err := c.read(fc, &dst.bits); err != nil {
			return fmt.Errorf("field %q: %w", name, err)
		}
	}
	return nil
}

// fromEvents sets the columns of fields from events read whole.
func (dst *Columns) fromEvents(evs []event.Event, fields []string) {
	n := len(evs)
	for _, ev := range evs {
		dst.Times = append(dst.Times, ev.Time.UnixNano())
	}
	for i, name := range fields {
		c := &dst.Fields[i]
		c.Ints, c.Floats, c.Values, c.Scale, c.Kind = c.Ints[:0], c.Floats[:0], nil, 0, ColumnValues
		c.Present = append(c.Present[:0], make([]byte, (n+7)/8)...)
		for j, ev := range evs {
			if v, ok := ev.Fields[name]; ok {
				c.Present[j/8] |= 1 << (j % 8)
				c.Values = append(c.Values, v)
			}
		}
	}
}

// read decodes a version 2 column by its kind: integers, decimals and
// floats as numbers, into c's own memory (a float column's bits through
// scratch), any other kind as readColumn reads it.
func (c *Column) read(fc fieldColumn, scratch *[]uint64) error {
	switch fc.kind {
	case kindInt:
		vs, err := readIntsTo(c.Ints[:0], fc.data, fc.values)
		if err != nil {
			return err
		}
		c.Kind, c.Ints = ColumnInts, vs
	case kindDecimal:
		if len(fc.data) == 0 || fc.data[0] > maxScale {
			return corrupt("decimal scale")
		}
		vs, err := readIntsTo(c.Ints[:0], fc.data[1:], fc.values)
		if err != nil {
			return err
		}
		c.Kind, c.Scale, c.Ints = ColumnDecimals, int(fc.data[0]), vs
	case kindFloat:
		bits, ok := readXORTo((*scratch)[:0], fc.data, fc.values)
		if !ok {
			return corrupt("float column")
		}
		*scratch = bits
		c.Kind = ColumnFloats
		c.Floats = slices.Grow(c.Floats[:0], len(bits))
		for _, b := range bits {
			c.Floats = append(c.Floats, math.Float64frombits(b))
		}
	default:
		vals, err := readColumn(fc.kind, fc.data, fc.values)
		if err != nil {
			return err
		}
		c.Kind, c.Values = ColumnValues, vals
	}
	return nil
}
