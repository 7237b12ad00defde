package storage

import "encoding/json"

// Item sizes follow the DynamoDB Developer Guide, "DynamoDB item sizes and
// formats" (docs.aws.amazon.com/amazondynamodb/latest/developerguide/
// CapacityUnitCalculations.html), which says:
//
//   - a string is its UTF-8 bytes, a binary value its raw bytes (not its
//     base64 form);
//   - a number is "approximately (1 byte per two significant digits) +
//     (1 byte)", with leading and trailing zeros trimmed, up to 38
//     significant digits (but see below);
//   - null and Boolean are 1 byte;
//   - a List or Map "requires 3 bytes of overhead, regardless of its
//     contents", plus the size of its nested elements, and "each List or
//     Map element also requires 1 byte of overhead"; a map element's size
//     includes its key, as an attribute's includes its name;
//   - an attribute is the UTF-8 bytes of its name plus its value.
//
// Go strings hold UTF-8 bytes, so len is the length DynamoDB counts.
//
// The guide calls the number rule approximate, and DynamoDB counts more
// than it says: it packs a number's digits in pairs aligned on the decimal
// point, after a byte for the exponent, and gives a negative number one
// more byte. So 12 takes 2 bytes but 1.2 takes 3 (its pairs are "01" and
// "2"), and -12 takes 3. DynamoDB Local and dynalite both count so, to
// the byte, and refuse an item that the guide's rule puts at 400 KB but
// this one puts a byte over; NumberSize counts as they do, which is never
// less than the guide's rule.
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
// JSON number s: a byte for the exponent, one per pair of significant
// digits, the pairs aligned on the decimal point, and one more for a
// negative number. Zero takes 1 byte. Significant digits are the
// mantissa's digits without leading and trailing zeros. Of a literal
// CanonicalNumber refuses, which no store holds, NumberSize counts each
// byte as a digit.
func NumberSize(s string) int {
	d, reason := parseDecimal(s)
	if reason != "" {
		return 1 + (len(s)+1)/2
	}
	return d.size()
}

// WriteUnitBytes is the item size one write capacity unit covers: a
// standard write of an item takes a unit per started WriteUnitBytes.
const WriteUnitBytes = 1024

// WriteUnits returns the write capacity units DynamoDB charges for a
// standard write of an item of size bytes (ItemSize): one per started
// KiB, at least one.
func WriteUnits(size int) int { return max(1, (size+WriteUnitBytes-1)/WriteUnitBytes) }
