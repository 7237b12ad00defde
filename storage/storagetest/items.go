package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// itemTests check BatchWrite and GetItem, and that every kind of attribute
// value round-trips.
func (s *suite) itemTests() []subtest {
	return []subtest{
		{"BatchSizes", s.testBatchSizes},
		{"Overwrite", s.testOverwrite},
		{"Values", s.testValues},
		{"GetItem", s.testGetItem},
		{"BatchDelete", s.testBatchDelete},
	}
}

// testBatchDelete deletes more items than one request takes, with keys of
// missing items among them, and refuses an invalid key whole.
func (s *suite) testBatchDelete(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	ctx := context.Background()
	items := numbered("del", 60)
	writeAll(t, st, name, items...)
	var keys []storage.Key
	for i, it := range items {
		if i%5 != 0 {
			keys = append(keys, it.Key())
		}
	}
	keys = append(keys, storage.Key{PK: "del", SK: "missing"}, storage.Key{PK: "nobody", SK: "x"})
	require.NoError(t, st.BatchDelete(ctx, name, keys))
	var left []storage.Item
	for i, it := range items {
		if i%5 == 0 {
			left = append(left, it)
		}
	}
	require.Equal(t, normaliseItems(left), normaliseItems(queryAll(t, st, storage.Query{Table: name, PK: "del"})))

	err := st.BatchDelete(ctx, name, []storage.Key{left[0].Key(), {PK: "", SK: "x"}})
	require.ErrorIs(t, err, storage.ErrInvalid)
	var bwe *storage.BatchWriteError
	require.ErrorAs(t, err, &bwe)
	require.Equal(t, []int{0, 1}, bwe.Unwritten)
	requireItem(t, st, name, left[0])

	require.ErrorIs(t, st.BatchDelete(ctx, name+"_missing", []storage.Key{left[0].Key()}), storage.ErrTableNotFound)
	require.NoError(t, st.BatchDelete(ctx, name, nil))
}

func (s *suite) testBatchSizes(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	// DynamoDB takes 25 items a request: 25 is one full request, 26 spills
	// into a second, 1000 is forty.
	for _, n := range []int{1, 25, 26, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			pk := fmt.Sprintf("batch-%d", n)
			items := numbered(pk, n)
			writeAll(t, st, name, items...)
			require.Equal(t, normaliseItems(items), normaliseItems(queryAll(t, st, storage.Query{Table: name, PK: pk})))
			requireItem(t, st, name, items[0])
			requireItem(t, st, name, items[n-1])
		})
	}
}

func (s *suite) testOverwrite(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	writeAll(t, st, name,
		item("p", "a", map[string]any{"x": num("1"), "y": "old"}),
		item("p", "b", map[string]any{"x": num("2")}),
	)
	// A put replaces the whole item: attributes the new item lacks are gone.
	a := item("p", "a", map[string]any{"z": true})
	c := item("p", "c", map[string]any{"x": num("3")})
	writeAll(t, st, name, a, c)
	b := item("p", "b", nil)
	writeAll(t, st, name, b)

	requireItem(t, st, name, a)
	requireItem(t, st, name, b)
	require.Equal(t, normaliseItems([]storage.Item{a, b, c}),
		normaliseItems(queryAll(t, st, storage.Query{Table: name, PK: "p"})), "one item per key")
}

// valueCases are attribute values of every type the contract lists. Each
// case is written as attribute "v" of its own item, and all of them
// together as the attributes of one item.
var valueCases = []struct {
	name  string
	value any
}{
	{"null", nil},
	{"true", true},
	{"false", false},
	{"string", "hello"},
	{"empty string", ""},
	{"non-ASCII string", "Grüße, 日本, 🚗"},
	{"string with controls", "tab\tnewline\nquote\"backslash\\"},
	{"number zero", num("0")},
	{"number integer", num("42")},
	{"number negative", num("-17")},
	{"number fraction", num("88.5")},
	{"number trailing zeros", num("1.50")},
	{"number exponent", num("1e3")},
	{"number negative exponent", num("-2.5E-3")},
	{"number 38 digits", num("12345678901234567890123456789012345678")},
	{"number 38 digit fraction", num("-0.12345678901234567890123456789012345678")},
	{"number smallest", num("1E-130")},
	{"number largest", num("9.9999999999999999999999999999999999999E+125")},
	{"number unix millis", num("1491825600123")},
	{"binary", []byte{0, 1, 2, 0xfe, 0xff}},
	{"empty binary", []byte{}},
	{"empty list", []any{}},
	{"empty map", map[string]any{}},
	{"list of every type", []any{nil, true, "s", num("1.25"), []byte("b"), []any{num("2")}, map[string]any{"k": "v"}}},
	{"map of every type", map[string]any{
		"null": nil, "bool": false, "s": "é", "n": num("-3"), "b": []byte{9},
		"l": []any{"x", num("0.5")}, "m": map[string]any{"deep": map[string]any{"deeper": []any{true}}},
		"Grüße": "non-ASCII key",
	}},
}

func (s *suite) testValues(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	name := s.createTable(t, st)

	var items []storage.Item
	all := map[string]any{}
	for _, vc := range valueCases {
		items = append(items, item("values", vc.name, map[string]any{"v": vc.value}))
		all[vc.name] = vc.value
	}
	items = append(items, item("all", "all", all))
	writeAll(t, st, name, items...)

	for _, it := range items {
		t.Run(it.SK, func(t *testing.T) {
			requireItem(t, st, name, it)
		})
	}
	// The query path decodes values too.
	want := normaliseItems(items[:len(items)-1])
	sortItems(want)
	require.Equal(t, want, normaliseItems(queryAll(t, st, storage.Query{Table: name, PK: "values"})))

	// Numbers come back as json.Number, never as float64 or a string.
	got, err := st.GetItem(ctx, name, "values", "number fraction")
	require.NoError(t, err)
	require.IsType(t, json.Number(""), got.Attrs["v"])
}

func (s *suite) testGetItem(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	name := s.createTable(t, st)
	hit := item("p", "ab", map[string]any{"v": "x"})
	writeAll(t, st, name, hit, item("p#", "a", nil), item("q", "a", nil))

	got, err := st.GetItem(ctx, name, "p", "ab")
	require.NoError(t, err)
	require.Equal(t, normaliseItem(hit), normaliseItem(got))

	for _, miss := range []struct{ pk, sk string }{
		{"p", "a"},   // a prefix of an existing sort key
		{"p", "abc"}, // an extension of one
		{"p", "b"},
		{"p#", "ab"}, // another partition that shares a prefix
		{"r", "ab"},  // a partition with no items
	} {
		_, err := st.GetItem(ctx, name, miss.pk, miss.sk)
		require.ErrorIs(t, err, storage.ErrItemNotFound, "%q/%q", miss.pk, miss.sk)
	}

	// The item returned is the caller's: changing it changes nothing stored.
	got.Attrs["v"] = "changed"
	requireItem(t, st, name, hit)
}
