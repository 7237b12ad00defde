package storage

import "encoding/json"

// MaxItemSize is the largest item DynamoDB stores: 400 KB, counting
// attribute names and values as ItemSize does.
const MaxItemSize = 400 * 1024

// Item sizes follow the DynamoDB Developer Guide, "DynamoDB item sizes and
// formats" (docs.aws.amazon.com/amazondynamodb/latest/developerguide/
// CapacityUnitCalculations.html), which says:
//
//   - a string is its UTF-8 bytes, a binary value its raw bytes (not its
//     base64 form);
//   - a number is "approximately (1 byte per two significant digits) +
//     (1 byte)", with leading and trailing zeros trimmed, up to 38
//     significant digits;
//   - null and Boolean are 1 byte;
//   - a List or Map "requires 3 bytes of overhead, regardless of its
//     contents", plus the size of its nested elements, and "each List or
//     Map element also requires 1 byte of overhead"; a map element's size
//     includes its key, as an attribute's includes its name;
//   - an attribute is the UTF-8 bytes of its name plus its value.
//
// Go strings hold UTF-8 bytes, so len is the length DynamoDB counts.
//
// The guide calls the number rule approximate (DynamoDB packs digits in
// pairs aligned on the decimal point, so 1.5 may take a byte more than the
// rule says); ItemSize uses the rule as written, which is what DynamoDB's
// published calculators use too.
const (
	scalarSize        = 1 // null and bool
	containerOverhead = 3 // list and map
	elementOverhead   = 1 // per list or map element
)

// ItemSize returns the size DynamoDB counts for the item, key attributes
// included: PK and SK are counted as string attributes named PKAttr and
// SKAttr.
func ItemSize(it Item) int {
	n := len(PKAttr) + len(it.PK) + len(SKAttr) + len(it.SK)
	for name, v := range it.Attrs {
		n += AttributeSize(name, v)
	}
	return n
}

// AttributeSize returns the size of one attribute: the UTF-8 length of its
// name plus ValueSize(v).
func AttributeSize(name string, v any) int {
	return len(name) + ValueSize(v)
}

// ValueSize returns the size DynamoDB counts for an attribute value of one
// of the types listed in the package documentation. A value of any other
// type counts 0 bytes: no backend stores such a value.
func ValueSize(v any) int {
	switch v := v.(type) {
	case nil, bool:
		return scalarSize
	case string:
		return len(v)
	case []byte:
		return len(v)
	case json.Number:
		return NumberSize(string(v))
	case []any:
		n := containerOverhead
		for _, e := range v {
			n += ValueSize(e) + elementOverhead
		}
		return n
	case map[string]any:
		n := containerOverhead
		for k, e := range v {
			n += len(k) + ValueSize(e) + elementOverhead
		}
		return n
	default:
		return 0
	}
}

// NumberSize returns the size DynamoDB counts for a number written as the
// decimal literal s: one byte per two significant digits, rounded up, plus
// one. Significant digits are the mantissa's digits without the sign, the
// exponent, and leading and trailing zeros, so zero takes 1 byte.
func NumberSize(s string) int {
	first, last, seen := -1, -1, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' {
			continue
		}
		if c != '0' {
			if first < 0 {
				first = seen
			}
			last = seen
		}
		seen++
	}
	if first < 0 {
		return 1
	}
	digits := last - first + 1
	return (digits+1)/2 + 1
}
