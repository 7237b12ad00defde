package storage

import (
	"errors"
	"fmt"
	"strconv"
)

// DynamoDB's limits on one expression (developer guide, "Expression
// parameters"): a condition or update expression string is at most 4 KB,
// and holds at most 300 operators and functions. AND, OR, NOT, each
// comparator and each function (attribute_exists, contains, size,
// list_append, if_not_exists, ...) count; the "=" of a SET clause and a
// document path's "." do not.
const (
	MaxExpressionBytes     = 4096
	MaxExpressionOperators = 300
)

// ErrTooComplex marks an Update whose expressions would exceed
// DynamoDB's limits: every backend refuses it, and the item is unchanged.
var ErrTooComplex = errors.New("timetable: update expression over DynamoDB's limits")

// ExpressionCost is what an Update's two expressions take, as DynamoDB
// counts it: the operators and functions exactly, the bytes as an upper
// bound (placeholders are counted at the longest the update can need).
// It is the one place the engine and the backends learn whether an
// Update fits; the DynamoDB backend's tests hold it to the expressions
// it builds.
type ExpressionCost struct {
	CondOperators, CondBytes     int
	UpdateOperators, UpdateBytes int
}

// Fits reports whether both expressions stay within DynamoDB's limits.
func (c ExpressionCost) Fits() bool {
	return c.CondOperators <= MaxExpressionOperators && c.CondBytes <= MaxExpressionBytes &&
		c.UpdateOperators <= MaxExpressionOperators && c.UpdateBytes <= MaxExpressionBytes
}

// check returns ErrTooComplex, with what is over, unless c fits.
func (c ExpressionCost) check() error {
	if c.Fits() {
		return nil
	}
	return fmt.Errorf("%w: condition %d operators, %d bytes; update %d operators, %d bytes (limits %d operators, %d bytes each)",
		ErrTooComplex, c.CondOperators, c.CondBytes, c.UpdateOperators, c.UpdateBytes, MaxExpressionOperators, MaxExpressionBytes)
}

// CheckExpressions returns an error wrapping ErrTooComplex when u's
// expressions would exceed DynamoDB's limits.
func (u Update) CheckExpressions() error { return u.Cost().check() }

// Cost returns what u's expressions take. Each condition is one clause,
// the clauses joined by AND; each action one clause of its section (SET
// or ADD). Every value gets its own placeholder (":0", ":1", ...), each
// distinct name one ("#0", ...).
func (u Update) Cost() ExpressionCost {
	names := map[string]bool{}
	values := 0
	for _, c := range u.Conds {
		for _, alt := range c.alternatives() {
			names[alt.Attr] = true
			values += condShapes[alt.Kind].values
		}
	}
	for _, a := range u.Actions {
		names[a.Attr] = true
		if a.Kind == ActionSetKey {
			names[a.Key] = true
		}
		values += actionShapes[a.Kind].values
	}
	// Names are counted at the longest placeholder; values exactly, as
	// each is used once.
	nameBytes := 1 + len(strconv.Itoa(max(len(names)-1, 0)))
	value := 0
	valueBytes := func() int { value++; return 1 + len(strconv.Itoa(value-1)) }
	cost := func(sh shape) (ops, bytes int) {
		bytes = sh.bytes + sh.names*nameBytes
		for range sh.values {
			bytes += valueBytes()
		}
		return sh.ops, bytes
	}

	var c ExpressionCost
	for i, cond := range u.Conds {
		if i > 0 {
			c.CondOperators++ // AND
			c.CondBytes += len(" AND ")
		}
		for j, alt := range cond.alternatives() {
			if j > 0 {
				c.CondOperators++ // OR
				c.CondBytes += len(" OR ")
			}
			ops, bytes := cost(condShapes[alt.Kind])
			c.CondOperators += ops
			c.CondBytes += bytes
		}
		if cond.Kind == CondAnyOf {
			c.CondBytes += len("()")
		}
	}
	var set, add bool // whether the section has begun
	for _, a := range u.Actions {
		begun := &set
		if a.Kind == ActionAdd {
			begun = &add
		}
		if *begun {
			c.UpdateBytes += len(", ")
		} else {
			*begun = true
			c.UpdateBytes += len("\nSET ")
		}
		ops, bytes := cost(actionShapes[a.Kind])
		c.UpdateOperators += ops
		c.UpdateBytes += bytes
	}
	return c
}

// alternatives returns the conditions of a CondAnyOf, or c alone.
func (c Cond) alternatives() []Cond {
	if c.Kind == CondAnyOf {
		return c.Any
	}
	return []Cond{c}
}

// A shape is what one clause takes: its operators and functions, its
// bytes besides placeholders, and its name and value placeholders.
type shape struct {
	ops, bytes, names, values int
}

// condShapes are the condition clauses as built, e.g.
// "(NOT (contains (#1, :2)))". Unknown kinds cost nothing here: the
// backends refuse them.
var condShapes = map[CondKind]shape{
	CondExists:      {1, len("(attribute_exists ())"), 1, 0},
	CondNotExists:   {1, len("(attribute_not_exists ())"), 1, 0},
	CondNotContains: {2, len("(NOT (contains (, )))"), 1, 1},
	CondSizeAtMost:  {2, len("(size () <= )"), 1, 1},
	CondAtMost:      {1, len("( <= )"), 1, 1},
	CondEqual:       {1, len("( = )"), 1, 1},
}

// actionShapes are the update clauses as built, e.g. "#3.#4 = :5" or
// "#1 = list_append(if_not_exists(#1, :8), :9)".
var actionShapes = map[ActionKind]shape{
	ActionSet:    {0, len(" = "), 1, 1},
	ActionSetKey: {0, len(". = "), 2, 1},
	ActionAppend: {2, len(" = list_append(if_not_exists(, ), )"), 2, 2},
	ActionAdd:    {0, len(" "), 1, 1},
}
