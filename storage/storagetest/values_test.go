package storagetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

func TestNormalise(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  any
		equal bool
	}{
		{"trailing zeros", json.Number("1.50"), json.Number("1.5"), true},
		{"exponent", json.Number("1e3"), json.Number("1000"), true},
		{"negative zero", json.Number("-0"), json.Number("0"), true},
		{"different numbers", json.Number("1.5"), json.Number("1.05"), false},
		{"number and float64", json.Number("1.5"), 1.5, false},
		{"number and string", json.Number("1"), "1", false},
		{"string and bytes", "a", []byte("a"), false},
		{"nil and empty bytes", []byte(nil), []byte{}, true},
		{"nested numbers", map[string]any{"l": []any{json.Number("2.0")}}, map[string]any{"l": []any{json.Number("2")}}, true},
		{"nil and empty list", []any(nil), []any{}, true},
		{"list and map", []any{}, map[string]any{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.equal {
				require.Equal(t, normalise(tc.a), normalise(tc.b))
			} else {
				require.NotEqual(t, normalise(tc.a), normalise(tc.b))
			}
		})
	}
	require.Equal(t,
		normaliseItem(storage.Item{PK: "p", SK: "s"}),
		normaliseItem(storage.Item{PK: "p", SK: "s", Attrs: map[string]any{}}),
		"no attributes and empty attributes")
}
