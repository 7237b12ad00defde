package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Filter is a condition on an item's attributes that a Query applies to
// the items it examines, returning only those it matches: DynamoDB's
// FilterExpression, which the DynamoDB backend sends as one, and which
// other backends evaluate with Match. A Filter is a tree: a leaf compares
// one top-level attribute (FilterCompare, FilterExists, FilterBeginsWith),
// an inner node joins others (FilterAnd, FilterOr, FilterNot).
//
// Its meaning is DynamoDB's, checked against DynamoDB Local by the
// conformance suite:
//
//   - = holds when the attribute has the value's type and equals it
//     (numbers by value: 1.50 = 1.5); <> is its negation, so it holds for
//     an item without the attribute;
//   - <, <=, > and >= hold only when the attribute is of the value's type,
//     a string (compared bytewise, as UTF-8) or a number (by value); the
//     value of an ordering is a string or a number, never a bool or null
//     (DynamoDB refuses the request);
//   - exists holds when the item has the attribute, whatever its type;
//   - begins_with holds when the attribute is a string starting with the
//     value, a string;
//   - contains holds when the attribute is a string holding the value, a
//     string, as a substring, or a list with an element equal to the
//     value (a string or a number);
//   - a comparison with Size set compares the size of the attribute to
//     the value, a number: the bytes of a string (UTF-8), the elements of
//     a list or map; an attribute of another type has no size, and the
//     comparison is as for a missing attribute (<> holds, the others
//     do not);
//   - NOT negates: NOT (a < 1) holds for an item without a.
type Filter struct {
	Op FilterOp
	// Attr names the attribute of a leaf.
	Attr string
	// Value is the value a comparison or begins_with takes: a string, a
	// json.Number, a bool or nil (NULL).
	Value any
	// Size, on a comparison, compares the size of the attribute
	// (DynamoDB's size function) instead of its value.
	Size bool
	// Args are the operands of FilterAnd and FilterOr (two or more) and
	// FilterNot (one).
	Args []Filter
}

// FilterOp is what a Filter node does.
type FilterOp int

// Filter operators.
const (
	FilterEq FilterOp = iota + 1
	FilterNe
	FilterLt
	FilterLe
	FilterGt
	FilterGe
	FilterExists
	FilterBeginsWith
	FilterAnd
	FilterOr
	FilterNot
	FilterContains
)

// String returns the operator as the filter language writes it.
func (op FilterOp) String() string {
	switch op {
	case FilterEq:
		return "="
	case FilterNe:
		return "!="
	case FilterLt:
		return "<"
	case FilterLe:
		return "<="
	case FilterGt:
		return ">"
	case FilterGe:
		return ">="
	case FilterExists:
		return "exists"
	case FilterBeginsWith:
		return "begins_with"
	case FilterAnd:
		return "and"
	case FilterOr:
		return "or"
	case FilterNot:
		return "not"
	case FilterContains:
		return "contains"
	}
	return fmt.Sprintf("FilterOp(%d)", int(op))
}

// IsComparison reports whether op compares an attribute to a value.
func (op FilterOp) IsComparison() bool { return op >= FilterEq && op <= FilterGe }

// ordering reports whether op orders values (<, <=, >, >=).
func (op FilterOp) ordering() bool { return op >= FilterLt && op <= FilterGe }

// ErrBadFilter marks a Filter that cannot be applied: a node without its
// operands, a value of the wrong type, a key attribute, or more operators
// than one DynamoDB expression may hold.
var ErrBadFilter = errors.New("timetable: bad filter")

// Validate reports what makes f unusable, wrapping ErrBadFilter: the
// Query of every backend refuses such a filter before reading anything.
func (f Filter) Validate() error {
	if err := f.validate(); err != nil {
		return err
	}
	if n := f.Operators(); n > MaxExpressionOperators {
		return fmt.Errorf("%w: %d operators, over DynamoDB's %d in one expression", ErrBadFilter, n, MaxExpressionOperators)
	}
	return nil
}

func (f Filter) validate() error {
	switch {
	case f.Size && !f.Op.IsComparison():
		return fmt.Errorf("%w: size applies to comparisons, not %s", ErrBadFilter, f.Op)
	case f.Op.IsComparison(), f.Op == FilterExists, f.Op == FilterBeginsWith, f.Op == FilterContains:
		if err := checkFilterAttr(f.Attr); err != nil {
			return err
		}
		if len(f.Args) != 0 {
			return fmt.Errorf("%w: %s takes no operands", ErrBadFilter, f.Op)
		}
	case f.Op == FilterAnd, f.Op == FilterOr:
		if len(f.Args) < 2 {
			return fmt.Errorf("%w: %s takes two operands or more", ErrBadFilter, f.Op)
		}
	case f.Op == FilterNot:
		if len(f.Args) != 1 {
			return fmt.Errorf("%w: not takes one operand", ErrBadFilter)
		}
	default:
		return fmt.Errorf("%w: %s", ErrBadFilter, f.Op)
	}
	switch {
	case f.Size:
		if _, ok := f.Value.(json.Number); !ok {
			return fmt.Errorf("%w: size compares to a number, not %s", ErrBadFilter, typeName(f.Value))
		}
	case f.Op == FilterContains:
		switch f.Value.(type) {
		case string, json.Number:
		default:
			return fmt.Errorf("%w: contains takes a string or a number, not %s", ErrBadFilter, typeName(f.Value))
		}
	case f.Op.ordering():
		switch f.Value.(type) {
		case string, json.Number:
		default:
			return fmt.Errorf("%w: %s compares strings or numbers, not %s", ErrBadFilter, f.Op, typeName(f.Value))
		}
	case f.Op.IsComparison():
		switch f.Value.(type) {
		case string, json.Number, bool, nil:
		default:
			return fmt.Errorf("%w: %s compares to a string, number, bool or null, not %s", ErrBadFilter, f.Op, typeName(f.Value))
		}
	case f.Op == FilterBeginsWith:
		if _, ok := f.Value.(string); !ok {
			return fmt.Errorf("%w: begins_with takes a string, not %s", ErrBadFilter, typeName(f.Value))
		}
	}
	if n, ok := f.Value.(json.Number); ok {
		if _, err := CanonicalNumber(string(n)); err != nil {
			return fmt.Errorf("%w: %w", ErrBadFilter, err)
		}
	}
	for _, a := range f.Args {
		if err := a.validate(); err != nil {
			return err
		}
	}
	return nil
}

// checkFilterAttr refuses a name no item attribute can have, and the key
// attributes, which a Query's key condition bounds instead.
func checkFilterAttr(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: an empty attribute name", ErrBadFilter)
	case name == PKAttr, name == SKAttr:
		return fmt.Errorf("%w: %q is a key attribute", ErrBadFilter, name)
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%w: attribute name of %d bytes, over %d", ErrBadFilter, len(name), MaxNameBytes)
	}
	return nil
}

// typeName names a value's type as errors write it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a bool"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

// Operators counts f's operators and functions as DynamoDB counts them in
// a FilterExpression: each comparison, function, AND, OR and NOT. A chain
// of n operands of AND or OR takes n-1.
func (f Filter) Operators() int {
	switch f.Op {
	case FilterAnd, FilterOr:
		n := len(f.Args) - 1
		for _, a := range f.Args {
			n += a.Operators()
		}
		return n
	case FilterNot:
		return 1 + f.Args[0].Operators()
	}
	return 1
}

// AppendAttrs appends to dst the names of the attributes f reads that dst
// does not hold yet.
func (f Filter) AppendAttrs(dst []string) []string {
	if f.Attr != "" && !slices.Contains(dst, f.Attr) {
		dst = append(dst, f.Attr)
	}
	for _, a := range f.Args {
		dst = a.AppendAttrs(dst)
	}
	return dst
}

// Match reports whether an item with attributes attrs passes f.
func (f Filter) Match(attrs map[string]any) bool {
	switch f.Op {
	case FilterAnd:
		for _, a := range f.Args {
			if !a.Match(attrs) {
				return false
			}
		}
		return true
	case FilterOr:
		for _, a := range f.Args {
			if a.Match(attrs) {
				return true
			}
		}
		return false
	case FilterNot:
		return !f.Args[0].Match(attrs)
	}
	v, ok := attrs[f.Attr]
	if f.Size {
		n, sized := sizeOf(v)
		ok = ok && sized
		v = json.Number(strconv.Itoa(n))
	}
	switch f.Op {
	case FilterExists:
		return ok
	case FilterNe:
		return !ok || !equalScalar(v, f.Value)
	}
	if !ok {
		return false
	}
	switch f.Op {
	case FilterEq:
		return equalScalar(v, f.Value)
	case FilterBeginsWith:
		s, isString := v.(string)
		return isString && strings.HasPrefix(s, f.Value.(string))
	case FilterContains:
		switch v := v.(type) {
		case string:
			sub, isString := f.Value.(string)
			return isString && strings.Contains(v, sub)
		case []any:
			return slices.ContainsFunc(v, func(e any) bool { return equalScalar(e, f.Value) })
		}
		return false
	}
	c, comparable := compareScalar(v, f.Value)
	if !comparable {
		return false
	}
	switch f.Op {
	case FilterLt:
		return c < 0
	case FilterLe:
		return c <= 0
	case FilterGt:
		return c > 0
	case FilterGe:
		return c >= 0
	}
	return false
}

// sizeOf returns DynamoDB's size of an attribute value: the bytes of a
// string, the elements of a list or map; ok false for other types.
func sizeOf(v any) (n int, ok bool) {
	switch v := v.(type) {
	case string:
		return len(v), true
	case []byte:
		return len(v), true
	case []any:
		return len(v), true
	case map[string]any:
		return len(v), true
	}
	return 0, false
}

// equalScalar reports whether attribute value v equals filter value want,
// a string, number, bool or nil: same type, same value.
func equalScalar(v, want any) bool {
	switch w := want.(type) {
	case nil:
		return v == nil
	case bool:
		b, ok := v.(bool)
		return ok && b == w
	}
	c, ok := compareScalar(v, want)
	return ok && c == 0
}

// compareScalar orders v against want when both are strings or both
// numbers.
func compareScalar(v, want any) (int, bool) {
	switch w := want.(type) {
	case string:
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(s, w), true
	case json.Number:
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		return CompareNumbers(n, w)
	}
	return 0, false
}

// CompareNumbers compares two numbers by value, as DynamoDB does: -1, 0 or
// +1, and ok false when either is not a number.
func CompareNumbers(a, b json.Number) (c int, ok bool) {
	var x, y apd.Decimal
	if _, _, err := x.SetString(string(a)); err != nil {
		return 0, false
	}
	if _, _, err := y.SetString(string(b)); err != nil {
		return 0, false
	}
	return x.Cmp(&y), true
}
