package storage

import (
	"fmt"
	"strconv"
)

// queryKeyNames and queryKeyValues are the names and values a
// Query's other expressions take beside its filter, as the DynamoDB
// backend writes them: the key condition names pk and sk and takes at
// most three values (pk = :v AND sk BETWEEN :v AND :v), and a projection
// names pk, sk and each of Attrs.
const (
	queryKeyNames  = 2
	queryKeyValues = 3
)

// ValidateFilter reports what makes q's filter one that a store would
// refuse, wrapping ErrBadFilter: Filter.Validate's rules, and DynamoDB's
// 4 KB limit on the FilterExpression as the DynamoDB backend writes it
// (FilterExpressionBytes). Every backend calls it, so a filter that one
// store refuses is refused by all; a Query without a filter passes.
func (q Query) ValidateFilter() error {
	if q.Filter == nil {
		return nil
	}
	if err := q.Filter.Validate(); err != nil {
		return err
	}
	if n := q.FilterExpressionBytes(); n > MaxExpressionBytes {
		return fmt.Errorf("%w: %d bytes as a DynamoDB FilterExpression, over DynamoDB's %d in one expression", ErrBadFilter, n, MaxExpressionBytes)
	}
	return nil
}

// FilterExpressionBytes returns an upper bound of the length of q's
// filter as the DynamoDB backend writes it, a FilterExpression in the
// expression package's format: "(a) OR (b)", "NOT (a)", "#n = :v",
// "attribute_exists (#n)", "begins_with (#n, :v)", every name and value a
// placeholder. Placeholders are counted at the longest the query can
// number them, as its key condition and projection share the numbering.
// It is 0 without a filter.
func (q Query) FilterExpressionBytes() int {
	if q.Filter == nil {
		return 0
	}
	names := queryKeyNames + len(q.Attrs) + len(q.Filter.AppendAttrs(nil))
	values := queryKeyValues + q.Filter.values()
	return q.Filter.expressionBytes(1+len(strconv.Itoa(names-1)), 1+len(strconv.Itoa(values-1)))
}

// values counts the values f's leaves take.
func (f Filter) values() int {
	n := 0
	if f.Op.IsComparison() || f.Op == FilterBeginsWith {
		n = 1
	}
	for _, a := range f.Args {
		n += a.values()
	}
	return n
}

// expressionBytes is the length of f written with name placeholders of
// name bytes and value placeholders of value bytes.
func (f Filter) expressionBytes(name, value int) int {
	switch f.Op {
	case FilterAnd, FilterOr:
		join := len(" AND ")
		if f.Op == FilterOr {
			join = len(" OR ")
		}
		n := join * (len(f.Args) - 1)
		for _, a := range f.Args {
			n += len("()") + a.expressionBytes(name, value)
		}
		return n
	case FilterNot:
		return len("NOT ()") + f.Args[0].expressionBytes(name, value)
	case FilterExists:
		return len("attribute_exists ()") + name
	case FilterBeginsWith:
		return len("begins_with (, )") + name + value
	case FilterNe, FilterLe, FilterGe:
		return name + len(" <> ") + value
	}
	return name + len(" = ") + value
}
