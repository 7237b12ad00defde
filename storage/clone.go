package storage

import (
	"bytes"
	"encoding/json"
	"strings"
)

// CloneValue returns a deep copy of an attribute value that shares no
// memory with v: what a caller of Iterator.Attrs keeps of a value, which
// may share the store's buffers, it copies with CloneValue.
func CloneValue(v any) any {
	switch v := v.(type) {
	case string:
		return strings.Clone(v)
	case json.Number:
		return json.Number(strings.Clone(string(v)))
	case []byte:
		return bytes.Clone(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = CloneValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[strings.Clone(k)] = CloneValue(e)
		}
		return out
	default:
		return v
	}
}
