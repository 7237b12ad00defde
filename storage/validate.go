package storage

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// An InvalidError says why DynamoDB would refuse an item, or a value of
// an Update. It matches ErrInvalid with errors.Is, and ErrItemTooLarge too
// when the item or one of its keys is too large.
type InvalidError struct {
	// Path locates the value at fault: an attribute name, then .key for
	// an element of a map and [i] for an element of a list, as in
	// "pos.lat" or "tags[3]". It is empty when the fault is the item's
	// (a key, the size) or when the value stands alone (CanonicalNumber).
	Path string
	// Reason says what is wrong, as in "nested deeper than 32 levels".
	Reason string

	tooLarge bool
}

// Error returns the path and the reason after ErrInvalid's text.
func (e InvalidError) Error() string {
	if e.Path == "" {
		return ErrInvalid.Error() + ": " + e.Reason
	}
	return ErrInvalid.Error() + ": " + e.Path + ": " + e.Reason
}

// Is reports whether target is ErrInvalid, or ErrItemTooLarge for an item
// or key that is too large.
func (e InvalidError) Is(target error) bool {
	return target == ErrInvalid || (e.tooLarge && target == ErrItemTooLarge)
}

// Validate returns nil when DynamoDB would store the item, or an
// InvalidError saying why not:
//
//   - a key empty, longer than MaxPKBytes or MaxSKBytes, or not UTF-8;
//   - an attribute named like a key attribute (PKAttr, SKAttr);
//   - an attribute name or map key that is empty or longer than
//     MaxNameBytes;
//   - a value of a type the package documentation does not list;
//   - a string, name or key that is not valid UTF-8 (the DynamoDB API
//     carries text as JSON, which would change it);
//   - a number CanonicalNumber refuses;
//   - a value deeper than MaxDepth (see Depth);
//   - an item larger than MaxItemSize, as ItemSize counts it.
//
// Every backend validates each item before it writes any, so that all of
// them refuse the same items, with errors wrapping ErrInvalid. A caller
// may validate first to learn what a write would answer.
func (it Item) Validate() error {
	_, _, err := it.validateSize()
	return err
}

// validateSize is Validate that also returns the item's size as ItemSize
// counts it, when the item is valid, and whether every number of the item
// is in canonical form already.
func (it Item) validateSize() (size int, canonical bool, err error) {
	if err := validateKey(it.PK, it.SK); err != nil {
		return 0, false, err
	}
	size = len(PKAttr) + len(it.PK) + len(SKAttr) + len(it.SK)
	noncanonical := false
	for name, v := range it.Attrs {
		if name == PKAttr || name == SKAttr {
			return 0, false, InvalidError{Path: name, Reason: "an attribute named like a key attribute"}
		}
		if reason := checkName(name); reason != "" {
			return 0, false, InvalidError{Path: strconv.Quote(name), Reason: "attribute name " + reason}
		}
		n, err := checkValueOf(v, 1, &noncanonical)
		if err != nil {
			return 0, false, err.asError(name)
		}
		size += len(name) + n
	}
	if size > MaxItemSize {
		return 0, false, InvalidError{Reason: fmt.Sprintf("item of %d bytes, over DynamoDB's limit of %d", size, MaxItemSize), tooLarge: true}
	}
	return size, !noncanonical, nil
}

// Checked is Validate that also returns the item's size as ItemSize
// counts it and the item marked as valid: a backend takes a marked item
// without validating it a second time (Valid), so that the item of an
// event is validated once between the request and the store. The mark is
// of the item as it was checked: a caller that changes the item's key or
// attributes afterwards (Attrs is a map, changed in place) must check it
// again. An item whose keys changed length or whose attributes were added
// or removed since is validated again (a key of the same length in other
// ASCII digits, a shard number, stays valid), as is an item built by hand.
func (it Item) Checked() (Item, int, error) {
	size, canonical, err := it.validateSize()
	if err != nil {
		return it, 0, err
	}
	it.checked = it.mark()
	it.canonical = canonical
	return it, size, nil
}

// NumbersCanonical reports whether the item is one Checked returned, of
// the same shape still (see Valid), whose numbers were all in canonical
// form (CanonicalNumber) when it was checked, as those of a decoded
// event are: a backend stores them as they are rather than reading each
// number a second time.
func (it Item) NumbersCanonical() bool { return it.canonical && it.checked == it.mark() }

// Rekeyed returns the item with the keys pk and sk. An item Checked
// returned stays marked as valid when the new keys are valid and no
// longer, together, than the old ones: the item was valid and can only
// have shrunk. Otherwise the mark is dropped, and the item is validated
// where it is written. The engine checks an event's item before it knows
// the event's id (its table's id scheme decides it), with an id as long
// as any scheme's, and gives the item its keys once the table is known.
func (it Item) Rekeyed(pk, sk string) Item {
	keep := it.checked == it.mark() && len(pk)+len(sk) <= len(it.PK)+len(it.SK) && validateKey(pk, sk) == nil
	it.PK, it.SK = pk, sk
	it.checked = checkMark{}
	if keep {
		it.checked = it.mark()
	}
	return it
}

// Valid is what a backend calls before it writes an item: nil at once for
// an item Checked returned, of the same shape still, and Validate's
// answer for any other.
func (it Item) Valid() error {
	if it.checked == it.mark() {
		return nil
	}
	return it.Validate()
}

// Depth returns how many levels v takes in DynamoDB's count (see
// MaxDepth): 1 for a scalar, and for a list or map one more than its
// deepest element, 2 when it is empty, as DynamoDB counts a list or map
// as holding its elements one level down whether it has any or not. An
// attribute's value is valid when its depth is at most MaxDepth; a value
// stored inside a map attribute, one level down, when its depth is at
// most MaxDepth-1.
func Depth(v any) int {
	switch v := v.(type) {
	case []any:
		d := 1
		for _, e := range v {
			d = max(d, Depth(e))
		}
		return d + 1
	case map[string]any:
		d := 1
		for _, e := range v {
			d = max(d, Depth(e))
		}
		return d + 1
	default:
		return 1
	}
}

// Validate returns nil when DynamoDB would take k as an item's key, or an
// error wrapping ErrInvalid.
func (k Key) Validate() error { return validateKey(k.PK, k.SK) }

// validateKey checks an item's key values.
func validateKey(pk, sk string) error {
	switch {
	case pk == "":
		return InvalidError{Reason: "empty partition key"}
	case sk == "":
		return InvalidError{Reason: "empty sort key"}
	case len(pk) > MaxPKBytes:
		return InvalidError{Reason: fmt.Sprintf("partition key of %d bytes, over DynamoDB's limit of %d", len(pk), MaxPKBytes), tooLarge: true}
	case len(sk) > MaxSKBytes:
		return InvalidError{Reason: fmt.Sprintf("sort key of %d bytes, over DynamoDB's limit of %d", len(sk), MaxSKBytes), tooLarge: true}
	case !utf8.ValidString(pk):
		return InvalidError{Reason: "partition key not valid UTF-8"}
	case !utf8.ValidString(sk):
		return InvalidError{Reason: "sort key not valid UTF-8"}
	}
	return nil
}

// checkName returns why an attribute name or map key is refused, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "empty"
	case len(name) > MaxNameBytes:
		return fmt.Sprintf("of %d bytes, over DynamoDB's limit of %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return "not valid UTF-8"
	}
	return ""
}

// valueError is an InvalidError on its way up from a nested value: its
// path is built from the inside out, by under.
type valueError struct {
	path   string // below the attribute: "", ".key", "[3]", ".key[3]"…
	reason string
}

// asError returns the InvalidError for the value at fault inside the
// value at path, or nil when e is nil.
func (e *valueError) asError(path string) error {
	if e == nil {
		return nil
	}
	return InvalidError{Path: path + e.path, Reason: e.reason}
}

// checkValue checks a value at the given level (1 for an attribute's
// value) and returns its size as ValueSize counts it.
func checkValue(v any, level int) (int, *valueError) {
	var noncanonical bool
	return checkValueOf(v, level, &noncanonical)
}

// checkValueOf is checkValue that sets *noncanonical when a number of v
// is not in canonical form.
func checkValueOf(v any, level int, noncanonical *bool) (int, *valueError) {
	switch v := v.(type) {
	case nil, bool:
		return scalarSize, nil
	case string:
		if !utf8.ValidString(v) {
			return 0, &valueError{reason: "string not valid UTF-8"}
		}
		return len(v), nil
	case []byte:
		return len(v), nil
	case json.Number:
		d, reason := parseDecimal(v)
		if reason != "" {
			return 0, &valueError{reason: reason}
		}
		if !d.canonical {
			*noncanonical = true
		}
		return d.size(), nil
	case []any:
		if level >= MaxDepth {
			return 0, &valueError{reason: depthReason}
		}
		n := containerOverhead
		for i, e := range v {
			en, err := checkValueOf(e, level+1, noncanonical)
			if err != nil {
				err.path = "[" + strconv.Itoa(i) + "]" + err.path
				return 0, err
			}
			n += en + elementOverhead
		}
		return n, nil
	case map[string]any:
		if level >= MaxDepth {
			return 0, &valueError{reason: depthReason}
		}
		n := containerOverhead
		for k, e := range v {
			if reason := checkName(k); reason != "" {
				return 0, &valueError{path: "." + strconv.Quote(k), reason: "map key " + reason}
			}
			en, err := checkValueOf(e, level+1, noncanonical)
			if err != nil {
				err.path = "." + k + err.path
				return 0, err
			}
			n += len(k) + en + elementOverhead
		}
		return n, nil
	default:
		return 0, &valueError{reason: fmt.Sprintf("value of type %T, not a storage attribute type", v)}
	}
}

// depthReason refuses a list or map at level MaxDepth.
var depthReason = fmt.Sprintf("nested deeper than %d levels", MaxDepth)
