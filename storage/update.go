package storage

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Update is a conditional change to one item: DynamoDB's UpdateItem with a
// condition expression. The store checks every condition against the item
// as it is now; only when all hold does it apply every action, and it does
// both atomically with respect to every other Update of the same item.
// When the item does not exist, the conditions see an item without
// attributes and the actions create it (unless a condition requires it to
// exist).
//
// The engine's map layout builds on Update: a conditional create of a
// millisecond's item, and appends that store an event id once however
// many writers race.
type Update struct {
	Table string
	PK    string
	SK    string
	// Conds must all hold for the actions to run.
	Conds []Cond
	// Actions are applied in order. Two actions may not touch the same
	// attribute, except that SetKey actions may name different keys of one
	// map (DynamoDB refuses overlapping paths in one update).
	Actions []Action
}

// CondKind is a kind of Cond.
type CondKind int

// Conditions an Update may put on an item. Attr names a top-level
// attribute ("pk" and "sk" name the key attributes, which every existing
// item has).
const (
	// CondExists holds when the item has the attribute Attr.
	CondExists CondKind = iota + 1
	// CondNotExists holds when the item lacks the attribute Attr.
	CondNotExists
	// CondNotContains holds unless Attr is a list holding the string
	// Value, or a string holding it as a substring (DynamoDB's contains);
	// so also when Attr is missing.
	CondNotContains
	// CondSizeAtMost holds when Attr is a list or map of at most Value (an
	// int) elements, or a binary value of at most Value bytes. It does not
	// hold when Attr is missing. On a string the backends differ (DynamoDB
	// Local and dynalite count characters, Pebble bytes): do not rely on it.
	CondSizeAtMost
	// CondAtMost holds when Attr is a number at most Value, a json.Number.
	// It does not hold when Attr is missing.
	CondAtMost
	// CondEqual holds when Attr has the type and value of Value, a string
	// or a json.Number (DynamoDB's =). It does not hold when Attr is
	// missing.
	CondEqual
	// CondAnyOf holds when any of the conditions in Any holds (DynamoDB's
	// OR); it has no Attr of its own, and its conditions are not CondAnyOf
	// themselves.
	CondAnyOf
)

// Cond is one condition of an Update.
type Cond struct {
	Kind  CondKind
	Attr  string
	Value any
	// Any are the alternatives of a CondAnyOf.
	Any []Cond
}

// ActionKind is a kind of Action.
type ActionKind int

// Actions an Update may take. Attr names a top-level attribute other than
// the key attributes.
const (
	// ActionSet sets Attr to Value.
	ActionSet ActionKind = iota + 1
	// ActionSetKey sets the key Key of the map attribute Attr to Value. The
	// item must have Attr, as a map: guard the update with CondExists on
	// Attr. Without the guard, DynamoDB refuses such an update; the error
	// wraps ErrConditionFailed on every backend.
	ActionSetKey
	// ActionAppend appends the elements of Value, a []any, to the list
	// attribute Attr, creating the list when Attr is missing.
	ActionAppend
	// ActionAdd adds Value, a json.Number, to the number attribute Attr,
	// which counts as zero when missing (DynamoDB's ADD).
	ActionAdd
)

// Action is one change an Update makes.
type Action struct {
	Kind  ActionKind
	Attr  string
	Key   string // for ActionSetKey
	Value any
}

// An action on an attribute of the wrong type (an append to a number, an
// add to a string) fails with an error wrapping ErrInvalid, and the item
// is unchanged.

// Validate returns nil when the update is well formed and its values are
// ones DynamoDB would store where the update puts them, or an error
// wrapping ErrInvalid:
//
//   - a key empty, longer than MaxPKBytes or MaxSKBytes (the error
//     matches ErrItemTooLarge too), or not UTF-8;
//   - a condition or action of an unknown kind, or on an attribute name
//     Item.Validate would refuse; an action on a key attribute;
//   - an operand or value of another type than its kind takes, or one
//     Item.Validate would refuse in its place: an attribute's value for
//     ActionSet, an element of the map for ActionSetKey (whose key is
//     checked as a map key), elements of the list for ActionAppend;
//   - two actions on one attribute, other than ActionSetKey actions on
//     distinct keys of one map (DynamoDB refuses overlapping paths);
//   - expressions over DynamoDB's limits (ErrTooComplex: see Cost).
//
// Every backend validates an update before it reads or changes anything.
// Whether the item would grow past MaxItemSize, or an action meets an
// attribute of the wrong type, only the store can tell.
func (u Update) Validate() error {
	if err := validateKey(u.PK, u.SK); err != nil {
		return err
	}
	for i, c := range u.Conds {
		if err := c.validate(); err != nil {
			return fmt.Errorf("condition %d on %q: %w", i, c.Attr, err)
		}
	}
	// touched maps an attribute to the keys SetKey actions set in it, or
	// to nil when an action takes the whole attribute.
	touched := make(map[string]map[string]bool, len(u.Actions))
	for i, a := range u.Actions {
		keys, seen := touched[a.Attr]
		switch {
		case a.Kind == ActionSetKey && seen && keys != nil:
			if keys[a.Key] {
				return fmt.Errorf("%w: action %d sets key %q of %q, as an earlier action does", ErrInvalid, i, a.Key, a.Attr)
			}
			keys[a.Key] = true
		case seen:
			return fmt.Errorf("%w: action %d touches %q, as an earlier action does", ErrInvalid, i, a.Attr)
		case a.Kind == ActionSetKey:
			touched[a.Attr] = map[string]bool{a.Key: true}
		default:
			touched[a.Attr] = nil
		}
		if err := a.validate(); err != nil {
			return fmt.Errorf("action %d on %q: %w", i, a.Attr, err)
		}
	}
	return u.CheckExpressions()
}

// validate checks a condition's attribute name and operand.
func (c Cond) validate() error {
	if c.Kind == CondAnyOf {
		if len(c.Any) == 0 {
			return fmt.Errorf("%w: CondAnyOf without alternatives", ErrInvalid)
		}
		for i, alt := range c.Any {
			if alt.Kind == CondAnyOf {
				return fmt.Errorf("%w: alternative %d: CondAnyOf inside CondAnyOf", ErrInvalid, i)
			}
			if err := alt.validate(); err != nil {
				return fmt.Errorf("alternative %d on %q: %w", i, alt.Attr, err)
			}
		}
		return nil
	}
	if c.Attr == "" && len(c.Any) > 0 {
		return fmt.Errorf("%w: alternatives on a condition of kind %d", ErrInvalid, c.Kind)
	}
	if reason := checkName(c.Attr); reason != "" {
		return InvalidError{Reason: "attribute name " + reason}
	}
	switch c.Kind {
	case CondExists, CondNotExists:
		return nil
	case CondNotContains:
		s, ok := c.Value.(string)
		if !ok {
			return operandError(c.Value, "string")
		}
		_, err := checkValue(s, 1)
		return err.asError(c.Attr)
	case CondSizeAtMost:
		if _, ok := c.Value.(int); !ok {
			return operandError(c.Value, "int")
		}
		return nil
	case CondAtMost:
		n, ok := c.Value.(json.Number)
		if !ok {
			return operandError(c.Value, "json.Number")
		}
		_, err := checkValue(n, 1)
		return err.asError(c.Attr)
	case CondEqual:
		switch c.Value.(type) {
		case string, json.Number:
		default:
			return operandError(c.Value, "string or json.Number")
		}
		_, err := checkValue(c.Value, 1)
		return err.asError(c.Attr)
	default:
		return fmt.Errorf("%w: unknown condition kind %d", ErrInvalid, c.Kind)
	}
}

// validate checks an action's attribute name and value.
func (a Action) validate() error {
	switch {
	case a.Attr == PKAttr || a.Attr == SKAttr:
		return InvalidError{Reason: "an action on a key attribute"}
	case checkName(a.Attr) != "":
		return InvalidError{Reason: "attribute name " + checkName(a.Attr)}
	}
	var err *valueError
	switch a.Kind {
	case ActionSet:
		_, err = checkValue(a.Value, 1)
	case ActionSetKey:
		if reason := checkName(a.Key); reason != "" {
			return InvalidError{Reason: "map key " + reason}
		}
		if _, err = checkValue(a.Value, 2); err != nil {
			return err.asError(a.Attr + "." + a.Key)
		}
	case ActionAppend:
		if _, ok := a.Value.([]any); !ok {
			return operandError(a.Value, "[]any")
		}
		_, err = checkValue(a.Value, 1)
	case ActionAdd:
		if _, ok := a.Value.(json.Number); !ok {
			return operandError(a.Value, "json.Number")
		}
		_, err = checkValue(a.Value, 1)
	default:
		return fmt.Errorf("%w: unknown action kind %d", ErrInvalid, a.Kind)
	}
	return err.asError(a.Attr)
}

// operandError refuses an operand or value of the wrong Go type.
func operandError(v any, want string) error {
	return InvalidError{Reason: fmt.Sprintf("operand of type %T, want %s", v, want)}
}

// Errors of Update, wrapped with the operation, table and key.
var (
	// ErrConditionFailed marks an Update whose conditions did not all
	// hold: the item is unchanged.
	ErrConditionFailed = errors.New("timetable: condition not met")
	// ErrItemTooLarge marks an Update that would make the item larger
	// than MaxItemSize (or a key longer than DynamoDB allows): the item is
	// unchanged.
	ErrItemTooLarge = errors.New("timetable: item too large")
)

// Constructors for the conditions and actions the engine uses, so that
// call sites read as the expression they stand for.

// Exists is CondExists on attr.
func Exists(attr string) Cond { return Cond{Kind: CondExists, Attr: attr} }

// NotExists is CondNotExists on attr.
func NotExists(attr string) Cond { return Cond{Kind: CondNotExists, Attr: attr} }

// NotContains is CondNotContains: the list attr does not hold s.
func NotContains(attr, s string) Cond { return Cond{Kind: CondNotContains, Attr: attr, Value: s} }

// SizeAtMost is CondSizeAtMost: attr has at most n elements.
func SizeAtMost(attr string, n int) Cond { return Cond{Kind: CondSizeAtMost, Attr: attr, Value: n} }

// AtMost is CondAtMost: the number attr is at most n.
func AtMost(attr string, n json.Number) Cond { return Cond{Kind: CondAtMost, Attr: attr, Value: n} }

// Equal is CondEqual: attr is the string or number v.
func Equal(attr string, v any) Cond { return Cond{Kind: CondEqual, Attr: attr, Value: v} }

// AnyOf is CondAnyOf: one of conds holds.
func AnyOf(conds ...Cond) Cond { return Cond{Kind: CondAnyOf, Any: conds} }

// Set is ActionSet.
func Set(attr string, v any) Action { return Action{Kind: ActionSet, Attr: attr, Value: v} }

// SetKey is ActionSetKey: attr[key] = v.
func SetKey(attr, key string, v any) Action {
	return Action{Kind: ActionSetKey, Attr: attr, Key: key, Value: v}
}

// Append is ActionAppend.
func Append(attr string, vs []any) Action { return Action{Kind: ActionAppend, Attr: attr, Value: vs} }

// Add is ActionAdd.
func Add(attr string, n json.Number) Action { return Action{Kind: ActionAdd, Attr: attr, Value: n} }
