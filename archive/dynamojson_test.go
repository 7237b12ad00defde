package archive_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/storage"
)

// allTypes is an item holding every storage value type, nested.
func allTypes() storage.Item {
	return storage.Item{PK: "acme#a_table#car-17#0", SK: "2017-04-10T12:00:00.123456000Z#id", Attrs: map[string]any{
		"s":     "héllo \"quoted\" <html> & tab\t",
		"n":     json.Number("-12.50e3"),
		"big":   json.Number("12345678901234567890123456789012345678"),
		"b":     []byte{0, 1, 2, 0xff, 'x'},
		"t":     true,
		"f":     false,
		"null":  nil,
		"list":  []any{"a", json.Number("1"), []byte("z"), nil, false, []any{}, map[string]any{"k": "v"}},
		"map":   map[string]any{"inner": map[string]any{"deep": []any{json.Number("0.001")}}, "e": map[string]any{}},
		"empty": "",
	}}
}

func TestItemRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		item storage.Item
	}{
		{"every type", allTypes()},
		{"key only", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{}}},
		{"key with #", storage.Item{PK: "a#b#c#d", SK: "x#y", Attrs: map[string]any{"v": json.Number("1")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, err := archive.MarshalItem(tc.item)
			require.NoError(t, err)
			require.NotContains(t, string(line), "\n")
			got, err := archive.UnmarshalItem(line)
			require.NoError(t, err)
			require.Equal(t, tc.item, got)
			again, err := archive.MarshalItem(got)
			require.NoError(t, err)
			require.Equal(t, string(line), string(again), "the line of an item is always the same")
		})
	}
}

func TestMarshalItemIsDynamoDBJSON(t *testing.T) {
	line, err := archive.MarshalItem(storage.Item{PK: "p", SK: "s", Attrs: map[string]any{
		"speed": json.Number("88.5"), "on": true, "raw": []byte("hi"), "x": nil,
		"l": []any{"a"}, "m": map[string]any{"k": json.Number("1")},
	}})
	require.NoError(t, err)
	require.JSONEq(t, `{"Item":{
		"pk":{"S":"p"},"sk":{"S":"s"},"speed":{"N":"88.5"},"on":{"BOOL":true},
		"raw":{"B":"aGk="},"x":{"NULL":true},"l":{"L":[{"S":"a"}]},"m":{"M":{"k":{"N":"1"}}}}}`, string(line))
}

func TestUnmarshalItem(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		ok         bool
	}{
		{"without the Item wrapper", `{"pk":{"S":"p"},"sk":{"S":"s"},"v":{"N":"1"}}`, true},
		{"no sort key", `{"Item":{"pk":{"S":"p"}}}`, false},
		{"numeric key", `{"Item":{"pk":{"N":"1"},"sk":{"S":"s"}}}`, false},
		{"two types", `{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"v":{"S":"a","N":"1"}}}`, false},
		{"a set", `{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"v":{"SS":["a"]}}}`, false},
		{"bad number", `{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"v":{"N":"twelve"}}}`, false},
		{"bad base64", `{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"v":{"B":"!!"}}}`, false},
		{"NULL false", `{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"v":{"NULL":false}}}`, false},
		{"not JSON", `{"Item":`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := archive.UnmarshalItem([]byte(tc.line))
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, archive.ErrFormat)
			}
		})
	}
}

func TestContentHashIgnoresOrder(t *testing.T) {
	lines := []string{`a`, `b`, `c`}
	var h1, h2, h3 archive.ContentHash
	for _, l := range lines {
		h1.Add([]byte(l))
	}
	for i := len(lines) - 1; i >= 0; i-- {
		h2.Add([]byte(lines[i]))
	}
	h3.Add([]byte("a"))
	h3.Add([]byte("b"))
	h3.Add([]byte("d"))
	require.Equal(t, h1.Sum(), h2.Sum())
	require.NotEqual(t, h1.Sum(), h3.Sum())
	require.Equal(t, int64(3), h1.Count())
}

func FuzzUnmarshalItem(f *testing.F) {
	line, _ := archive.MarshalItem(allTypes())
	f.Add(line)
	f.Add([]byte(`{"pk":{"S":"p"},"sk":{"S":"s"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		it, err := archive.UnmarshalItem(data)
		if err != nil {
			return
		}
		// Whatever parses marshals again, and parses back the same.
		out, err := archive.MarshalItem(it)
		require.NoError(t, err)
		back, err := archive.UnmarshalItem(out)
		require.NoError(t, err)
		require.Equal(t, it, back)
	})
}
