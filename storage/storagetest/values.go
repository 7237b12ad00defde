package storagetest

import (
	"encoding/json"
	"math/big"
	"sort"

	"github.com/timetabledb/timetable/storage"
)

// normalise returns v with every json.Number replaced by the canonical
// form of its value (so that 1.50, 1.5 and 15e-1 compare equal), every
// empty or nil []byte replaced by an empty non-nil one, and every nil
// []any or map[string]any by an empty one. Other values are returned as
// they are, so a value of the wrong Go type still fails the comparison.
func normalise(v any) any {
	switch v := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(v))
		if !ok {
			return v
		}
		return json.Number(r.RatString())
	case []byte:
		if len(v) == 0 {
			return []byte{}
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalise(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normalise(e)
		}
		return out
	default:
		return v
	}
}

// normaliseItem normalises every attribute of it; an item without
// attributes gets a nil map, whether it came with an empty one or none.
func normaliseItem(it storage.Item) storage.Item {
	out := storage.Item{PK: it.PK, SK: it.SK}
	if len(it.Attrs) > 0 {
		out.Attrs = normalise(it.Attrs).(map[string]any)
	}
	return out
}

// normaliseItems normalises every item.
func normaliseItems(items []storage.Item) []storage.Item {
	out := make([]storage.Item, len(items))
	for i, it := range items {
		out[i] = normaliseItem(it)
	}
	return out
}

// sortItems sorts items by partition key, then sort key, bytewise.
func sortItems(items []storage.Item) {
	sort.Slice(items, func(i, j int) bool {
		if items[i].PK != items[j].PK {
			return items[i].PK < items[j].PK
		}
		return items[i].SK < items[j].SK
	})
}
