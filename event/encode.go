package event

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// MarshalJSON encodes the event in the API's output shape,
//
//	{"time":"2017-04-10T12:00:00.123456Z","series":"car-17","id":"...","fields":{...}}
//
// with the time in UTC in RFC 3339 with as many fraction digits as it
// needs, series and id left out when empty, and fields always present,
// their keys sorted. Numbers are written as they are held (Validate makes
// them canonical), []byte values as base64 strings as encoding/json writes
// them, and values of other Go types with encoding/json.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(nil)
}

// AppendJSON appends the event's MarshalJSON encoding to dst.
func (e Event) AppendJSON(dst []byte) ([]byte, error) {
	dst = appendHead(dst, e.Time, e.Series, e.ID)
	dst, err := appendMap(dst, e.Fields)
	if err != nil {
		return nil, fmt.Errorf("encode event: %w", err)
	}
	return append(dst, '}'), nil
}

// appendHead appends an event's encoding up to its fields: its time,
// series and id, and the fields' key.
func appendHead(dst []byte, t time.Time, series, id string) []byte {
	dst = append(dst, `{"time":"`...)
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if series != "" {
		dst = append(dst, `,"series":`...)
		dst = appendString(dst, series)
	}
	if id != "" {
		dst = append(dst, `,"id":`...)
		dst = appendString(dst, id)
	}
	return append(dst, `,"fields":`...)
}

func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if v {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, v), nil
	case json.Number:
		if !isJSONNumber(v) {
			return nil, fmt.Errorf("invalid number %q", string(v))
		}
		return append(dst, v...), nil
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v)
		return append(dst, '"'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		return appendMap(dst, v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
}

func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	// The keys of a map of a few fields, the common case, are sorted on
	// the stack.
	var few [16]string
	keys := few[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// isJSONNumber reports whether s is a JSON number. Those a store holds
// are checked without allocating; those out of DynamoDB's range, which
// only an event never validated has, are JSON all the same.
func isJSONNumber(s json.Number) bool {
	if IsJSONNumber(string(s)) {
		return true
	}
	var buf [48]byte
	if _, reason := appendNumber(buf[:0], s); reason == "" {
		return true
	}
	return s != "" && (s[0] == '-' || isDigit(s[0])) && json.Valid([]byte(s))
}

// plain8 reports whether the 8 bytes of s are all ASCII that a JSON
// string holds as it is: no control character, quote or backslash. It
// tests them at once, in a word (the bit tricks of "Bit Twiddling
// Hacks": a byte less than n, a zero byte).
func plain8(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	control := (w - ones*0x20) & ^w & highs
	return (w&highs)|control|zero(w^(ones*'"'))|zero(w^(ones*'\\')) == 0
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. It escapes what JSON requires,
// and U+2028 and U+2029 as JavaScript needs, but not HTML's <, > and &;
// invalid UTF-8 becomes U+FFFD, as with encoding/json.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
