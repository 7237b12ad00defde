package pebblestore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/timetabledb/timetable/storage"
)

// An item's attributes are stored in a compact binary form written here
// rather than with a general-purpose library: it is the hot path of every
// write and read, it must keep json.Number apart from string and []byte
// apart from string (JSON, gob and CBOR with default options each lose one
// of these), and the format is ten lines long.
//
//	item   = version uvarint(count) { uvarint(len(name)) name value }
//	value  = tagNull | tagFalse | tagTrue
//	       | tagString uvarint(len) bytes
//	       | tagNumber uvarint(len) canonical-digits
//	       | tagBinary uvarint(len) bytes
//	       | tagList   uvarint(count) { value }
//	       | tagMap    uvarint(count) { uvarint(len(key)) key value }
//
// Numbers are stored in DynamoDB's canonical form (storage.CanonicalNumber),
// so both backends return the same text for the same number. Attribute
// order follows Go's map iteration and carries no meaning.
//
// The encoder takes items storage.Item.Validate accepted, and the decoder
// refuses as corrupt what no valid item encodes to: a list or map at
// level storage.MaxDepth, which also bounds its recursion.
const codecVersion byte = 1

// Value tags.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagString
	tagNumber
	tagBinary
	tagList
	tagMap
)

var errCorrupt = errors.New("timetable: pebble: corrupt item encoding")

// appendItem appends the encoding of attrs, which storage.Item.Validate
// accepted, to dst. canonical says every number of attrs is in canonical
// form already (storage.Item.NumbersCanonical), and is stored as it is.
func appendItem(dst []byte, attrs map[string]any, canonical bool) ([]byte, error) {
	dst = append(dst, codecVersion)
	dst = binary.AppendUvarint(dst, uint64(len(attrs)))
	for name, v := range attrs {
		dst = appendString(dst, name)
		var err error
		if dst, err = appendValue(dst, v, canonical); err != nil {
			return dst, fmt.Errorf("attribute %q: %w", name, err)
		}
	}
	return dst, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendValue appends one value. The errors it returns are for values
// storage.Item.Validate refuses, which never reach it.
func appendValue(dst []byte, v any, canonical bool) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, tagNull), nil
	case bool:
		if v {
			return append(dst, tagTrue), nil
		}
		return append(dst, tagFalse), nil
	case string:
		return appendString(append(dst, tagString), v), nil
	case json.Number:
		if canonical {
			return appendString(append(dst, tagNumber), string(v)), nil
		}
		n, err := storage.CanonicalNumber(string(v))
		if err != nil {
			return dst, err
		}
		return appendString(append(dst, tagNumber), string(n)), nil
	case []byte:
		dst = binary.AppendUvarint(append(dst, tagBinary), uint64(len(v)))
		return append(dst, v...), nil
	case []any:
		dst = binary.AppendUvarint(append(dst, tagList), uint64(len(v)))
		var err error
		for i, e := range v {
			if dst, err = appendValue(dst, e, canonical); err != nil {
				return dst, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return dst, nil
	case map[string]any:
		dst = binary.AppendUvarint(append(dst, tagMap), uint64(len(v)))
		var err error
		for k, e := range v {
			dst = appendString(dst, k)
			if dst, err = appendValue(dst, e, canonical); err != nil {
				return dst, fmt.Errorf("key %q: %w", k, err)
			}
		}
		return dst, nil
	default:
		return dst, fmt.Errorf("value of type %T is not a storage attribute type", v)
	}
}

// decoder reads an encoded item from a string. Decoding from a string,
// made from the stored bytes with one copy, lets every name, string and
// number of the item share that one allocation.
type decoder struct {
	s string
	i int
}

func (d *decoder) byte() (byte, error) {
	if d.i >= len(d.s) {
		return 0, errCorrupt
	}
	c := d.s[d.i]
	d.i++
	return c, nil
}

func (d *decoder) uvarint() (uint64, error) {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := d.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, nil
		}
	}
	return 0, errCorrupt
}

// count reads a length or element count and checks it against what is
// left, so that corrupt input cannot make the decoder allocate wildly.
func (d *decoder) count() (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(d.s)-d.i) {
		return 0, errCorrupt
	}
	return int(n), nil
}

func (d *decoder) string() (string, error) {
	n, err := d.count()
	if err != nil {
		return "", err
	}
	s := d.s[d.i : d.i+n]
	d.i += n
	return s, nil
}

// item decodes the attributes.
func (d *decoder) item() (map[string]any, error) {
	n, err := d.header()
	if err != nil {
		return nil, err
	}
	return d.attributes(n)
}

// header reads an item's version and attribute count.
func (d *decoder) header() (int, error) {
	v, err := d.byte()
	if err != nil {
		return 0, err
	}
	if v != codecVersion {
		return 0, fmt.Errorf("%w: version %d", errCorrupt, v)
	}
	return d.count()
}

// attributes decodes the n attributes that end the input.
func (d *decoder) attributes(n int) (map[string]any, error) {
	m := make(map[string]any, n)
	for range n {
		name, err := d.string()
		if err != nil {
			return nil, err
		}
		if m[name], err = d.value(1); err != nil {
			return nil, err
		}
	}
	if d.i != len(d.s) {
		return nil, errCorrupt
	}
	return m, nil
}

// appendProjection appends to dst the attributes of the encoded item enc
// that attrs names, encoded as attributes, without the item's header, and
// returns how many it appended: a read with a projection copies only what
// it returns out of the stored bytes. It keeps nothing of enc.
func appendProjection(dst []byte, enc string, attrs []string) ([]byte, int, error) {
	d := decoder{s: enc}
	n, err := d.header()
	if err != nil {
		return dst, 0, err
	}
	kept := 0
	for range n {
		start := d.i
		name, err := d.string()
		if err != nil {
			return dst, 0, err
		}
		if err := d.skip(1); err != nil {
			return dst, 0, err
		}
		if slices.Contains(attrs, name) {
			dst = append(dst, enc[start:d.i]...)
			kept++
		}
	}
	if d.i != len(d.s) {
		return dst, 0, errCorrupt
	}
	return dst, kept, nil
}

// value decodes one value at level depth, as storage.MaxDepth counts
// levels: 1 for an attribute's value.
func (d *decoder) value(depth int) (any, error) {
	tag, err := d.byte()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagNull:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagString:
		return d.string()
	case tagNumber:
		s, err := d.string()
		return json.Number(s), err
	case tagBinary:
		s, err := d.string()
		return []byte(s), err
	case tagList:
		if depth >= storage.MaxDepth {
			return nil, errCorrupt
		}
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		l := make([]any, n)
		for i := range l {
			if l[i], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return l, nil
	case tagMap:
		if depth >= storage.MaxDepth {
			return nil, errCorrupt
		}
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, n)
		for range n {
			k, err := d.string()
			if err != nil {
				return nil, err
			}
			if m[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return m, nil
	default:
		return nil, fmt.Errorf("%w: tag %d", errCorrupt, tag)
	}
}

// skip passes over one value without building it.
func (d *decoder) skip(depth int) error {
	tag, err := d.byte()
	if err != nil {
		return err
	}
	switch tag {
	case tagNull, tagFalse, tagTrue:
		return nil
	case tagString, tagNumber, tagBinary:
		_, err := d.string()
		return err
	case tagList, tagMap:
		if depth >= storage.MaxDepth {
			return errCorrupt
		}
		n, err := d.count()
		if err != nil {
			return err
		}
		for range n {
			if tag == tagMap {
				if _, err := d.string(); err != nil {
					return err
				}
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	default:
		return fmt.Errorf("%w: tag %d", errCorrupt, tag)
	}
}
