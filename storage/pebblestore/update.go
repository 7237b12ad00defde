package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math/big"
	"slices"
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
// than DynamoDB allows; storage.ErrTableNotFound; and storage.ErrInvalid
// for an update DynamoDB would refuse: one storage.Update.Validate
// refuses, an append to a value that is not a list, an ADD to a value
// that is not a number or whose sum DynamoDB cannot hold.
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
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := u.Validate(); err != nil {
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
	// The actions' values were valid where they go, but the item they
	// make may be too large.
	if err := (storage.Item{PK: u.PK, SK: u.SK, Attrs: attrs}).Validate(); err != nil {
		return err
	}
	val, err := appendItem(nil, attrs, false)
	if err != nil {
		return err
	}

	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return storage.ErrTableNotFound
	}
	if err := s.db.Set(key, val, pebble.Sync); err != nil {
		return err
	}
	s.idle.wrote()
	return nil
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
	attrs, err := d.item()
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

// checkConds evaluates the conditions against the stored item, whose
// attributes are attrs when exists. The key attributes count as present
// on an existing item.
func checkConds(conds []storage.Cond, pk, sk string, attrs map[string]any, exists bool) error {
	value := func(attr string) (any, bool) {
		switch {
		case !exists:
			return nil, false
		case attr == storage.PKAttr:
			return pk, true
		case attr == storage.SKAttr:
			return sk, true
		}
		v, ok := attrs[attr]
		return v, ok
	}
	for i, c := range conds {
		if !holds(c, value) {
			return fmt.Errorf("%w: condition %d (%s on %q)", storage.ErrConditionFailed, i, condName(c.Kind), c.Attr)
		}
	}
	return nil
}

// holds reports whether the condition holds for an item whose attribute
// values value returns (ok false for one it lacks). The operand was
// checked by storage.Update.Validate.
func holds(c storage.Cond, value func(attr string) (v any, ok bool)) bool {
	if c.Kind == storage.CondAnyOf {
		return slices.ContainsFunc(c.Any, func(alt storage.Cond) bool { return holds(alt, value) })
	}
	v, ok := value(c.Attr)
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
	case storage.CondEqual:
		if n, isNumber := c.Value.(json.Number); isNumber {
			m, ok := v.(json.Number)
			cmp, comparable := storage.CompareNumbers(m, n)
			return ok && comparable && cmp == 0
		}
		s, isString := v.(string)
		return isString && s == c.Value.(string)
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
	case storage.CondEqual:
		return "equal"
	case storage.CondAnyOf:
		return "any of"
	default:
		return fmt.Sprintf("kind %d", k)
	}
}

// applyActions applies the actions, checked by storage.Update.Validate,
// to attrs.
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
				return fmt.Errorf("%w: append to a value of type %T, not a list", storage.ErrInvalid, cur)
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
				return fmt.Errorf("%w: add to a value of type %T, not a number", storage.ErrInvalid, cur)
			}
		}
		n, err := addNumbers(string(sum), string(a.Value.(json.Number)))
		if err != nil {
			return fmt.Errorf("add %s to %s: %w", a.Value, sum, err)
		}
		attrs[a.Attr] = json.Number(n)
	}
	return nil
}

// addNumbers returns the exact sum of two valid numbers in canonical
// form, or an error wrapping storage.ErrInvalid when DynamoDB could not
// hold it (more than 38 significant digits, a magnitude out of range).
func addNumbers(x, y string) (string, error) {
	cx, err := storage.CanonicalNumber(x)
	if err != nil {
		return "", err
	}
	cy, err := storage.CanonicalNumber(y)
	if err != nil {
		return "", err
	}
	a, _ := new(big.Rat).SetString(string(cx))
	b, _ := new(big.Rat).SetString(string(cy))
	// The sum of two decimals has no more fractional digits than the
	// longer of theirs, so FloatString at that precision is exact.
	sum, err := storage.CanonicalNumber(a.Add(a, b).FloatString(max(fractionDigits(string(cx)), fractionDigits(string(cy)))))
	return string(sum), err
}

// fractionDigits returns the number of digits after the point of a
// canonical number.
func fractionDigits(canonical string) int {
	if i := strings.IndexByte(canonical, '.'); i >= 0 {
		return len(canonical) - i - 1
	}
	return 0
}
