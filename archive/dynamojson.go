package archive

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/storage"
)

// ErrFormat marks archive data or a manifest that does not parse.
var ErrFormat = errors.New("timetable: bad archive format")

// MarshalItem returns an item as one line of DynamoDB JSON, without the
// newline: {"Item":{"pk":{"S":"..."},"sk":{"S":"..."},"speed":{"N":"88.5"}}}.
// Attribute names come out sorted, so an item always has the same bytes.
func MarshalItem(it storage.Item) ([]byte, error) {
	m := make(map[string]any, len(it.Attrs)+2)
	for name, v := range it.Attrs {
		av, err := encodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q of item (%q, %q): %w", name, it.PK, it.SK, err)
		}
		m[name] = av
	}
	m[storage.PKAttr] = map[string]any{"S": it.PK}
	m[storage.SKAttr] = map[string]any{"S": it.SK}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"Item": m}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeValue turns a storage value into its DynamoDB JSON form.
func encodeValue(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return map[string]any{"NULL": true}, nil
	case bool:
		return map[string]any{"BOOL": v}, nil
	case string:
		return map[string]any{"S": v}, nil
	case json.Number:
		return map[string]any{"N": string(v)}, nil
	case []byte:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v)}, nil
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			ev, err := encodeValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = ev
		}
		return map[string]any{"L": l}, nil
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			ev, err := encodeValue(e)
			if err != nil {
				return nil, err
			}
			m[k] = ev
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("%w: value of type %T is not a storage value", ErrFormat, v)
}

// UnmarshalItem parses one line of DynamoDB JSON, with or without the
// {"Item": ...} wrapper, into an item. The key attributes must be strings.
// Sets (SS, NS, BS) are refused: timetable never writes them.
func UnmarshalItem(data []byte) (storage.Item, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return storage.Item{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if inner, ok := raw["Item"]; ok && len(raw) == 1 {
		raw = nil
		if err := json.Unmarshal(inner, &raw); err != nil {
			return storage.Item{}, fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	it := storage.Item{Attrs: make(map[string]any, len(raw))}
	for name, r := range raw {
		v, err := decodeValue(r)
		if err != nil {
			return storage.Item{}, fmt.Errorf("attribute %q: %w", name, err)
		}
		switch name {
		case storage.PKAttr, storage.SKAttr:
			s, ok := v.(string)
			if !ok {
				return storage.Item{}, fmt.Errorf("%w: key attribute %q is not a string", ErrFormat, name)
			}
			if name == storage.PKAttr {
				it.PK = s
			} else {
				it.SK = s
			}
		default:
			it.Attrs[name] = v
		}
	}
	if _, ok := raw[storage.PKAttr]; !ok {
		return storage.Item{}, fmt.Errorf("%w: item has no %q", ErrFormat, storage.PKAttr)
	}
	if _, ok := raw[storage.SKAttr]; !ok {
		return storage.Item{}, fmt.Errorf("%w: item has no %q", ErrFormat, storage.SKAttr)
	}
	return it, nil
}

// decodeValue parses one attribute value of DynamoDB JSON.
func decodeValue(r json.RawMessage) (any, error) {
	var tv map[string]json.RawMessage
	if err := json.Unmarshal(r, &tv); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if len(tv) != 1 {
		return nil, fmt.Errorf("%w: an attribute value has exactly one type, got %d", ErrFormat, len(tv))
	}
	for typ, body := range tv {
		switch typ {
		case "NULL":
			var b bool
			if err := json.Unmarshal(body, &b); err != nil || !b {
				return nil, fmt.Errorf("%w: NULL must be true", ErrFormat)
			}
			return nil, nil
		case "BOOL":
			var b bool
			if err := json.Unmarshal(body, &b); err != nil {
				return nil, fmt.Errorf("%w: BOOL: %v", ErrFormat, err)
			}
			return b, nil
		case "S":
			var s string
			if err := json.Unmarshal(body, &s); err != nil {
				return nil, fmt.Errorf("%w: S: %v", ErrFormat, err)
			}
			return s, nil
		case "N":
			var s string
			if err := json.Unmarshal(body, &s); err != nil {
				return nil, fmt.Errorf("%w: N: %v", ErrFormat, err)
			}
			var n json.Number
			if err := json.Unmarshal([]byte(s), &n); err != nil {
				return nil, fmt.Errorf("%w: N %q is not a number", ErrFormat, s)
			}
			return n, nil
		case "B":
			var s string
			if err := json.Unmarshal(body, &s); err != nil {
				return nil, fmt.Errorf("%w: B: %v", ErrFormat, err)
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("%w: B: %v", ErrFormat, err)
			}
			return b, nil
		case "L":
			var rs []json.RawMessage
			if err := json.Unmarshal(body, &rs); err != nil {
				return nil, fmt.Errorf("%w: L: %v", ErrFormat, err)
			}
			l := make([]any, len(rs))
			for i, e := range rs {
				v, err := decodeValue(e)
				if err != nil {
					return nil, err
				}
				l[i] = v
			}
			return l, nil
		case "M":
			var rs map[string]json.RawMessage
			if err := json.Unmarshal(body, &rs); err != nil {
				return nil, fmt.Errorf("%w: M: %v", ErrFormat, err)
			}
			m := make(map[string]any, len(rs))
			for k, e := range rs {
				v, err := decodeValue(e)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			return m, nil
		}
		return nil, fmt.Errorf("%w: attribute type %q is not one timetable stores", ErrFormat, typ)
	}
	panic("unreachable")
}
