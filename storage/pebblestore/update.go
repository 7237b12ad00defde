package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math/big"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/storage"
)

// Update applies a conditional update to one item: it reads the item,
// checks every condition, applies every action and writes the result with
// pebble.Sync, all under the item's lock (see itemLocks), so Updates of
// one item never interleave. On any error the item is unchanged.
//
// Errors wrap storage.ErrConditionFailed when a condition does not hold or
// an ActionSetKey finds no map to set a key of; storage.ErrItemTooLarge
// when the result would exceed storage.MaxItemSize or a key is longer
// than DynamoDB allows; storage.ErrTableNotFound; and ErrInvalidItem for
// an update DynamoDB would refuse: a value outside the contract's types,
// a number it cannot hold, an action on a key attribute, two actions on
// one attribute, an append to a value that is not a list, an ADD to a
// value that is not a number.
//
// A BatchWrite of the same item is not serialised with an Update: the
// later commit wins (see the package documentation).
func (s *Store) Update(ctx context.Context, u storage.Update) error {
	if err := s.update(ctx, u); err != nil {
		return fmt.Errorf("update item %q/%q in table %q: %w", u.PK, u.SK, u.Table, err)
	}
	return nil
}

func (s *Store) update(ctx context.Context, u storage.Update) error {
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkUpdate(u); err != nil {
		return err
	}
	t := s.catalog.lookup(u.Table)
	if t == nil {
		return storage.ErrTableNotFound
	}
	key := appendItemKey(nil, t.id, u.PK, u.SK)

	mu := s.itemLocks.of(key)
	mu.Lock()
	defer mu.Unlock()
	if err := ctx.Err(); err != nil { // the wait for the lock may have been long
		return err
	}
	attrs, exists, err := s.readAttrs(key)
	if err != nil {
		return err
	}
	if err := checkConds(u.Conds, u.PK, u.SK, attrs, exists); err != nil {
		return err
	}
	if attrs == nil {
		attrs = make(map[string]any, len(u.Actions))
	}
	if err := applyActions(attrs, u.Actions); err != nil {
		return err
	}
	val, err := appendItem(nil, attrs)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidItem, err)
	}
	if len(val)+len(u.PK)+len(u.SK) > sizeCheckThreshold {
		if n := storage.ItemSize(storage.Item{PK: u.PK, SK: u.SK, Attrs: attrs}); n > storage.MaxItemSize {
			return fmt.Errorf("%w: %d bytes, over DynamoDB's %d", storage.ErrItemTooLarge, n, storage.MaxItemSize)
		}
	}

	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return storage.ErrTableNotFound
	}
	return s.db.Set(key, val, pebble.Sync)
}

// readAttrs returns the attributes of the item stored under key, and
// whether there is one. The map is the caller's to change.
func (s *Store) readAttrs(key []byte) (map[string]any, bool, error) {
	val, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	d := decoder{s: string(val)}
	closer.Close()
	attrs, err := d.item(nil)
	if err != nil {
		return nil, false, err
	}
	return attrs, true, nil
}

// A Store's itemLocks serialise Updates of one item. A lock is chosen by a
// hash of the item's key (table id, partition key, sort key), so Updates of
// different items rarely wait for each other and the lock table never
// grows; no code holds two at once.

// stripeCount is the number of item locks.
const stripeCount = 256

// stripes is a fixed set of mutexes picked by key hash.
type stripes struct {
	seed maphash.Seed
	mu   [stripeCount]sync.Mutex
}

// of returns the mutex of key.
func (s *stripes) of(key []byte) *sync.Mutex {
	return &s.mu[maphash.Bytes(s.seed, key)%stripeCount]
}

// checkUpdate checks what does not depend on the stored item: the keys,
// the conditions' operands and the actions' values, and that no two
// actions touch one attribute (DynamoDB refuses overlapping paths).
func checkUpdate(u storage.Update) error {
	switch {
	case u.PK == "" || u.SK == "":
		return fmt.Errorf("%w: empty key", ErrInvalidItem)
	case len(u.PK) > maxPKLen:
		return fmt.Errorf("%w: partition key longer than %d bytes", storage.ErrItemTooLarge, maxPKLen)
	case len(u.SK) > maxSKLen:
		return fmt.Errorf("%w: sort key longer than %d bytes", storage.ErrItemTooLarge, maxSKLen)
	}
	for i, c := range u.Conds {
		if err := checkCond(c); err != nil {
			return fmt.Errorf("%w: condition %d on %q: %w", ErrInvalidItem, i, c.Attr, err)
		}
	}
	// touched maps an attribute to the keys SetKey actions set in it, or
	// to nil when an action takes the whole attribute.
	touched := make(map[string]map[string]bool, len(u.Actions))
	for i, a := range u.Actions {
		if err := checkAction(a, touched); err != nil {
			return fmt.Errorf("%w: action %d on %q: %w", ErrInvalidItem, i, a.Attr, err)
		}
	}
	// DynamoDB would refuse the expressions: so does Pebble.
	return u.CheckExpressions()
}

// checkCond checks one condition's attribute name and operand.
func checkCond(c storage.Cond) error {
	if c.Attr == "" {
		return errors.New("empty attribute name")
	}
	switch c.Kind {
	case storage.CondExists, storage.CondNotExists:
		return nil
	case storage.CondNotContains:
		if _, ok := c.Value.(string); !ok {
			return fmt.Errorf("operand of type %T, want string", c.Value)
		}
		return nil
	case storage.CondSizeAtMost:
		if _, ok := c.Value.(int); !ok {
			return fmt.Errorf("operand of type %T, want int", c.Value)
		}
		return nil
	case storage.CondAtMost:
		n, ok := c.Value.(json.Number)
		if !ok {
			return fmt.Errorf("operand of type %T, want json.Number", c.Value)
		}
		if _, err := canonicalNumber(string(n)); err != nil {
			return fmt.Errorf("number %q: %w", string(n), err)
		}
		return nil
	default:
		return fmt.Errorf("unknown condition kind %d", c.Kind)
	}
}

// checkAction checks one action's attribute, value and overlap with the
// actions before it, recorded in touched.
func checkAction(a storage.Action, touched map[string]map[string]bool) error {
	if a.Attr == "" || a.Attr == storage.PKAttr || a.Attr == storage.SKAttr {
		return errors.New("attribute name is empty or a key attribute's")
	}
	keys, seen := touched[a.Attr]
	switch {
	case a.Kind == storage.ActionSetKey && seen && keys != nil:
		if keys[a.Key] {
			return fmt.Errorf("key %q set twice", a.Key)
		}
		keys[a.Key] = true
	case seen:
		return errors.New("two actions on one attribute")
	case a.Kind == storage.ActionSetKey:
		touched[a.Attr] = map[string]bool{a.Key: true}
	default:
		touched[a.Attr] = nil
	}
	switch a.Kind {
	case storage.ActionSet, storage.ActionSetKey:
	case storage.ActionAppend:
		if _, ok := a.Value.([]any); !ok {
			return fmt.Errorf("value of type %T, want []any", a.Value)
		}
	case storage.ActionAdd:
		if _, ok := a.Value.(json.Number); !ok {
			return fmt.Errorf("value of type %T, want json.Number", a.Value)
		}
	default:
		return fmt.Errorf("unknown action kind %d", a.Kind)
	}
	// The value's types and numbers: the same rules as an item's.
	if _, err := appendValue(nil, a.Value, 1); err != nil {
		return err
	}
	return nil
}

// checkConds evaluates the conditions against the stored item, whose
// attributes are attrs when exists. The key attributes count as present
// on an existing item.
func checkConds(conds []storage.Cond, pk, sk string, attrs map[string]any, exists bool) error {
	for i, c := range conds {
		var v any
		var ok bool
		switch {
		case !exists:
		case c.Attr == storage.PKAttr:
			v, ok = pk, true
		case c.Attr == storage.SKAttr:
			v, ok = sk, true
		default:
			v, ok = attrs[c.Attr]
		}
		if !holds(c, v, ok) {
			return fmt.Errorf("%w: condition %d (%s on %q)", storage.ErrConditionFailed, i, condName(c.Kind), c.Attr)
		}
	}
	return nil
}

// holds reports whether the condition holds for attribute value v, which
// is present when ok. The operand was checked by checkCond.
func holds(c storage.Cond, v any, ok bool) bool {
	switch c.Kind {
	case storage.CondExists:
		return ok
	case storage.CondNotExists:
		return !ok
	case storage.CondNotContains:
		if str, isString := v.(string); isString {
			// DynamoDB's contains on a string tests for a substring.
			return !strings.Contains(str, c.Value.(string))
		}
		l, isList := v.([]any)
		if !isList {
			return true
		}
		for _, e := range l {
			if s, isString := e.(string); isString && s == c.Value.(string) {
				return false
			}
		}
		return true
	case storage.CondSizeAtMost:
		var n int
		switch v := v.(type) {
		case []any:
			n = len(v)
		case map[string]any:
			n = len(v)
		case string:
			n = len(v)
		case []byte:
			n = len(v)
		default:
			return false
		}
		return n <= c.Value.(int)
	case storage.CondAtMost:
		n, isNumber := v.(json.Number)
		if !isNumber {
			return false
		}
		a, aok := new(big.Rat).SetString(string(n))
		b, bok := new(big.Rat).SetString(string(c.Value.(json.Number)))
		return aok && bok && a.Cmp(b) <= 0
	default:
		return false
	}
}

// condName names a condition kind in errors.
func condName(k storage.CondKind) string {
	switch k {
	case storage.CondExists:
		return "exists"
	case storage.CondNotExists:
		return "not exists"
	case storage.CondNotContains:
		return "not contains"
	case storage.CondSizeAtMost:
		return "size at most"
	case storage.CondAtMost:
		return "at most"
	default:
		return fmt.Sprintf("kind %d", k)
	}
}

// applyActions applies the actions, checked by checkAction, to attrs.
func applyActions(attrs map[string]any, actions []storage.Action) error {
	for i, a := range actions {
		if err := applyAction(attrs, a); err != nil {
			return fmt.Errorf("action %d on %q: %w", i, a.Attr, err)
		}
	}
	return nil
}

func applyAction(attrs map[string]any, a storage.Action) error {
	cur, ok := attrs[a.Attr]
	switch a.Kind {
	case storage.ActionSet:
		attrs[a.Attr] = a.Value
	case storage.ActionSetKey:
		// DynamoDB answers a ValidationException ("the document path
		// provided in the update expression is invalid for update"); the
		// contract turns it into a failed condition on every backend.
		m, isMap := cur.(map[string]any)
		if !isMap {
			return fmt.Errorf("%w: set key %q: the attribute is not a map", storage.ErrConditionFailed, a.Key)
		}
		m[a.Key] = a.Value
	case storage.ActionAppend:
		var l []any
		if ok {
			var isList bool
			if l, isList = cur.([]any); !isList {
				return fmt.Errorf("%w: append to a value of type %T, not a list", ErrInvalidItem, cur)
			}
		}
		vs := a.Value.([]any)
		out := make([]any, 0, len(l)+len(vs))
		attrs[a.Attr] = append(append(out, l...), vs...)
	case storage.ActionAdd:
		sum := json.Number("0")
		if ok {
			var isNumber bool
			if sum, isNumber = cur.(json.Number); !isNumber {
				return fmt.Errorf("%w: add to a value of type %T, not a number", ErrInvalidItem, cur)
			}
		}
		n, err := addNumbers(string(sum), string(a.Value.(json.Number)))
		if err != nil {
			return fmt.Errorf("%w: add %s to %s: %w", ErrInvalidItem, a.Value, sum, err)
		}
		attrs[a.Attr] = json.Number(n)
	}
	return nil
}

// addNumbers returns the exact sum of two decimal literals in canonical
// form, or an error when DynamoDB could not hold it (more than 38
// significant digits, a magnitude out of range).
func addNumbers(x, y string) (string, error) {
	a, aok := new(big.Rat).SetString(x)
	b, bok := new(big.Rat).SetString(y)
	if !aok || !bok {
		return "", errNotNumber
	}
	cx, err := canonicalNumber(x)
	if err != nil {
		return "", err
	}
	cy, err := canonicalNumber(y)
	if err != nil {
		return "", err
	}
	// The sum of two decimals has no more fractional digits than the
	// longer of theirs, so FloatString at that precision is exact.
	return canonicalNumber(a.Add(a, b).FloatString(max(fractionDigits(cx), fractionDigits(cy))))
}

// fractionDigits returns the number of digits after the point of a
// canonical number.
func fractionDigits(canonical string) int {
	if i := strings.IndexByte(canonical, '.'); i >= 0 {
		return len(canonical) - i - 1
	}
	return 0
}
