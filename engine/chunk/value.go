package chunk

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/timetabledb/timetable/storage"
)

// ErrCorrupt is wrapped by the errors of a chunk that cannot be decoded:
// truncated, of an unknown version or kind, or inconsistent.
var ErrCorrupt = errors.New("timetable: corrupt chunk")

// Tags of a value in the generic encoding (doc.go, "Values").
const (
	tagNull   = 0
	tagFalse  = 1
	tagTrue   = 2
	tagString = 3
	tagNumber = 4
	tagBytes  = 5
	tagList   = 6
	tagMap    = 7
)

// appendValue appends the generic encoding of v, a value of one of the
// types package storage lists; map keys are written in bytewise order, so
// equal values encode alike.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, tagNull), nil
	case bool:
		if v {
			return append(dst, tagTrue), nil
		}
		return append(dst, tagFalse), nil
	case string:
		dst = append(dst, tagString)
		return appendString(dst, v), nil
	case json.Number:
		dst = append(dst, tagNumber)
		return appendNumber(dst, string(v))
	case []byte:
		dst = append(dst, tagBytes)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...), nil
	case []any:
		dst = append(dst, tagList)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		var err error
		for _, e := range v {
			if dst, err = appendValue(dst, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case map[string]any:
		dst = append(dst, tagMap)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var err error
		for _, k := range keys {
			dst = appendString(dst, k)
			if dst, err = appendValue(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return dst, nil
	default:
		return nil, fmt.Errorf("chunk: a value of type %T, which no store holds", v)
	}
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Numbers in the generic encoding are their canonical text packed two
// characters a byte: digits as 0-9, "." as 10, "-" as 11, after the
// text's length.
const (
	nibblePoint = 10
	nibbleMinus = 11
)

func appendNumber(dst []byte, s string) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	for i := 0; i < len(s); i += 2 {
		hi, ok := nibble(s[i])
		if !ok {
			return nil, fmt.Errorf("chunk: number %q not in canonical form", s)
		}
		var lo byte
		if i+1 < len(s) {
			if lo, ok = nibble(s[i+1]); !ok {
				return nil, fmt.Errorf("chunk: number %q not in canonical form", s)
			}
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, nil
}

func nibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case c == '.':
		return nibblePoint, true
	case c == '-':
		return nibbleMinus, true
	}
	return 0, false
}

const nibbleChars = "0123456789.-"

// reader reads a chunk's bytes; the first problem sticks in err, and
// every read after it returns zero values.
type reader struct {
	b   []byte
	err error
}

// corrupt returns an error wrapping ErrCorrupt that says what is wrong.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of things of at least min (> 0) bytes each, refusing one
// the rest of the bytes cannot hold, so that a corrupt count allocates
// nothing.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.fail("count past the end")
		return 0
	}
	return int(n)
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.fail("truncated")
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) string() string { return string(r.bytes(r.count(1))) }

// value reads a value of the generic encoding at nesting level level
// (an attribute is level 1, as storage.Depth counts).
func (r *reader) value(level int) any {
	if level > storage.MaxDepth {
		r.fail("too deep")
		return nil
	}
	switch tag := r.byte(); tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagString:
		return r.string()
	case tagNumber:
		return r.number()
	case tagBytes:
		return slices.Clone(r.bytes(r.count(1)))
	case tagList:
		n := r.count(1)
		l := make([]any, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			l = append(l, r.value(level+1))
		}
		return l
	case tagMap:
		n := r.count(2)
		m := make(map[string]any, n)
		for i := 0; i < n && r.err == nil; i++ {
			k := r.string()
			m[k] = r.value(level + 1)
		}
		return m
	default:
		r.fail(fmt.Sprintf("value tag %d", tag))
		return nil
	}
}

func (r *reader) number() json.Number {
	n := r.uvarint()
	if n > 2*uint64(len(r.b)) {
		r.fail("number past the end")
		return ""
	}
	packed := r.bytes(int(n+1) / 2)
	if r.err != nil {
		return ""
	}
	s := make([]byte, n)
	for i := range s {
		c := packed[i/2]
		if i%2 == 0 {
			c >>= 4
		}
		c &= 15
		if int(c) >= len(nibbleChars) {
			r.fail("number digit")
			return ""
		}
		s[i] = nibbleChars[c]
	}
	return json.Number(s)
}
