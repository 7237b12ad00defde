package parquetfile

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/timetabledb/timetable/storage"
)

// Kind is the type of a field's column.
type Kind string

// The kinds of field columns; JSON is a field without a column of its own,
// in fields_json.
const (
	Int64   Kind = "int64"
	Decimal Kind = "decimal"
	Double  Kind = "double"
	String  Kind = "string"
	Bool    Kind = "bool"
	Binary  Kind = "binary"
	JSON    Kind = "json"
)

// Names of the columns every file has.
const (
	ColTenant     = "tenant"
	ColTable      = "table"
	ColTime       = "time"
	ColSeries     = "series"
	ColID         = "id"
	ColFieldsJSON = "fields_json"
)

// MaxDecimalDigits is the most digits a DECIMAL column holds: as many as a
// DynamoDB number, and as many as DuckDB, Spark and Athena read.
const MaxDecimalDigits = 38

// DecimalScale is the scale of every DECIMAL column: a field's numbers
// that are not all int64 go to a DECIMAL(MaxDecimalDigits, DecimalScale)
// when every one has at most DecimalScale fractional digits and
// MaxDecimalDigits-DecimalScale integer ones. One type for every file,
// whatever digits its own values have, so that files of different periods
// and the CLI's exports type a field alike.
const DecimalScale = 9

// reserved are the names no field column may take, lower-cased: the
// columns above and the partition columns of archive paths.
var reserved = map[string]bool{
	ColTenant: true, ColTable: true, ColTime: true, ColSeries: true, ColID: true, ColFieldsJSON: true,
	"period": true, "write_month": true,
}

// Options configure a Learner.
type Options struct {
	// Origin adds the tenant and table columns, for files of many logical
	// tables (an archive of a physical table).
	Origin bool
}

// Column is one field's column.
type Column struct {
	Name string
	Kind Kind
	// Precision and Scale are a Decimal column's.
	Precision, Scale int
}

// Schema is the columns of a file of events.
type Schema struct {
	origin  bool
	columns []Column // every field, by name
	typed   map[string]typedColumn
	jsonPos int // the position of fields_json in the file
	node    *parquet.Schema
}

// typedColumn is a field's column and its position in the file.
type typedColumn struct {
	Column
	pos int
}

// Columns returns the field columns, by name, and the fields that go to
// fields_json (Kind JSON).
func (s *Schema) Columns() []Column { return slices.Clone(s.columns) }

// anyNumber is the kind a Learner gives every number, whatever its
// digits, until Schema picks the column that holds them all.
const anyNumber Kind = "number"

// seen is what a Learner knows of one field.
type seen struct {
	kinds     map[Kind]bool
	nonInt    bool // a number that is not an int64
	intDigits int  // most digits before the point
	scale     int  // most digits after it
}

// Learner learns the schema of a file from the fields of its events.
type Learner struct {
	opts   Options
	fields map[string]*seen
}

// NewLearner returns a Learner that has seen nothing.
func NewLearner(o Options) *Learner { return &Learner{opts: o, fields: map[string]*seen{}} }

// Learn takes in one event's fields.
func (l *Learner) Learn(fields map[string]any) {
	for name, v := range fields {
		f := l.fields[name]
		if f == nil {
			f = &seen{kinds: map[Kind]bool{}}
			l.fields[name] = f
		}
		k := kindOf(v)
		switch k {
		case "":
			continue // null
		case anyNumber:
			n, ok := parseNumber(v.(json.Number))
			if !ok {
				k = JSON
				break
			}
			f.nonInt = f.nonInt || !n.isInt64
			f.intDigits = max(f.intDigits, len(n.intPart))
			f.scale = max(f.scale, len(n.frac))
		}
		f.kinds[k] = true
	}
}

// Schema returns the schema of what was learnt.
func (l *Learner) Schema() *Schema {
	lower := map[string]int{}
	for name := range l.fields {
		lower[strings.ToLower(name)]++
	}
	cols := make([]Column, 0, len(l.fields))
	for name, f := range l.fields {
		// Fields of only nulls have no type to give them.
		c := Column{Name: name, Kind: JSON}
		if lname := strings.ToLower(name); len(f.kinds) == 1 && !reserved[lname] && lower[lname] == 1 {
			for k := range f.kinds {
				c.Kind = k
			}
		}
		if c.Kind == anyNumber {
			c = l.numberColumn(name, f)
		}
		cols = append(cols, c)
	}
	slices.SortFunc(cols, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
	return newSchema(l.opts.Origin, cols)
}

// numberColumn returns the column of a field whose values are all
// numbers, by the one rule every file follows: int64 when they are
// integers that fit, else DECIMAL(MaxDecimalDigits, DecimalScale) when
// they fit it, else double.
func (l *Learner) numberColumn(name string, f *seen) Column {
	switch {
	case !f.nonInt:
		return Column{Name: name, Kind: Int64}
	case f.scale <= DecimalScale && f.intDigits <= MaxDecimalDigits-DecimalScale:
		return Column{Name: name, Kind: Decimal, Precision: MaxDecimalDigits, Scale: DecimalScale}
	}
	return Column{Name: name, Kind: Double}
}

// newSchema builds the Parquet schema of columns.
func newSchema(origin bool, cols []Column) *Schema {
	s := &Schema{origin: origin, columns: cols, typed: map[string]typedColumn{}}
	var g orderedGroup
	if origin {
		g.add(ColTenant, parquet.String())
		g.add(ColTable, parquet.String())
	}
	g.add(ColTime, parquet.Timestamp(parquet.Nanosecond))
	g.add(ColSeries, parquet.String())
	g.add(ColID, parquet.String())
	for _, c := range cols {
		var n parquet.Node
		switch c.Kind {
		case JSON:
			continue
		case Int64:
			n = parquet.Int(64)
		case Decimal:
			n = parquet.Decimal(c.Scale, c.Precision, parquet.FixedLenByteArrayType(decimalBytes))
		case Double:
			n = parquet.Leaf(parquet.DoubleType)
		case String:
			n = parquet.String()
		case Bool:
			n = parquet.Leaf(parquet.BooleanType)
		case Binary:
			n = parquet.Leaf(parquet.ByteArrayType)
		}
		s.typed[c.Name] = typedColumn{Column: c, pos: len(g.names)}
		g.add(c.Name, parquet.Optional(n))
	}
	s.jsonPos = len(g.names)
	g.add(ColFieldsJSON, parquet.Optional(parquet.JSON()))
	s.node = parquet.NewSchema("event", g)
	return s
}

// kindOf returns the kind of a storage value: anyNumber for every
// number, "" for null.
func kindOf(v any) Kind {
	switch v.(type) {
	case nil:
		return ""
	case json.Number:
		return anyNumber
	case string:
		return String
	case bool:
		return Bool
	case []byte:
		return Binary
	}
	return JSON // lists and maps
}

// number is a DynamoDB number in its canonical form (package storage),
// taken apart.
type number struct {
	neg     bool
	intPart string // digits before the point, "" for a magnitude below 1
	frac    string // digits after it
	isInt64 bool
	i64     int64
}

// parseNumber takes a number apart; ok is false for a value that is not a
// number DynamoDB holds.
func parseNumber(v json.Number) (n number, ok bool) {
	c, err := storage.CanonicalNumber(string(v))
	if err != nil {
		return number{}, false
	}
	s := string(c)
	n.neg = strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	n.intPart, n.frac, _ = strings.Cut(s, ".")
	if n.intPart == "0" {
		n.intPart = ""
	}
	if n.frac == "" {
		i, err := strconv.ParseInt(string(c), 10, 64)
		n.isInt64, n.i64 = err == nil, i
	}
	return n, true
}
