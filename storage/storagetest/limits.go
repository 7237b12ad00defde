package storagetest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// limitTests check DynamoDB's limits (package storage, limits.go) at each
// boundary: every backend stores the item at the limit and reads it back,
// and refuses the item one step past it with an error wrapping
// storage.ErrInvalid, writing nothing of the batch. Package event refuses
// events by the same limits, so an event it accepts is an item every
// backend stores. The checks share one table.
func (s *suite) limitTests() []subtest {
	return []subtest{
		{"SharedTable", s.testLimitsSharedTable},
	}
}

func (s *suite) testLimitsSharedTable(t *testing.T) {
	st := s.open(t)
	table := s.createTable(t, st)
	t.Run("Accepted", func(t *testing.T) { testLimitsAccepted(t, st, table) })
	t.Run("Refused", func(t *testing.T) { testLimitsRefused(t, st, table) })
	t.Run("Update", func(t *testing.T) { testLimitsUpdate(t, st, table) })
}

// nest returns leaf inside n maps, one inside another, each with the one
// key "a": a value of storage.Depth n+1 (for a scalar leaf).
func nest(n int, leaf any) any {
	v := leaf
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// nestLists is nest with lists.
func nestLists(n int, leaf any) any {
	v := leaf
	for range n {
		v = []any{v}
	}
	return v
}

// sized returns the item with a string attribute "fill" added that makes
// its size, as storage.ItemSize counts it, exactly size bytes.
func sized(it storage.Item, size int) storage.Item {
	attrs := map[string]any{"fill": ""}
	for k, v := range it.Attrs {
		attrs[k] = v
	}
	it.Attrs = attrs
	attrs["fill"] = strings.Repeat("x", size-storage.ItemSize(it))
	return it
}

// limitCase is an item at or past a limit.
type limitCase struct {
	name string
	item storage.Item
}

// acceptedAtLimits are items at DynamoDB's limits, which every backend
// stores. Their sort keys are their names.
func acceptedAtLimits() []limitCase {
	c := func(name string, attrs map[string]any) limitCase {
		return limitCase{name, item("accepted", name, attrs)}
	}
	return []limitCase{
		// A scalar at level 32: the attribute is level 1, and 31 maps or
		// lists hold it.
		c("32 levels of maps", map[string]any{"v": nest(storage.MaxDepth-1, num("1"))}),
		c("32 levels of lists", map[string]any{"v": nestLists(storage.MaxDepth-1, "x")}),
		c("empty map at level 31", map[string]any{"v": nest(storage.MaxDepth-2, map[string]any{})}),
		c("38 digits", map[string]any{"v": num("12345678901234567890123456789012345678")}),
		c("38 digits of a fraction", map[string]any{"v": num("-0.12345678901234567890123456789012345678")}),
		c("38 digits and zeros", map[string]any{"v": num("0.0012345678901234567890123456789012345678000")}),
		c("largest", map[string]any{"v": num("9.9999999999999999999999999999999999999E+125")}),
		c("largest negative", map[string]any{"v": num("-9.9999999999999999999999999999999999999E+125")}),
		c("smallest", map[string]any{"v": num("1E-130")}),
		c("smallest negative", map[string]any{"v": num("-1E-130")}),
		c("name at its limit", map[string]any{strings.Repeat("n", storage.MaxNameBytes): "x"}),
		c("map key at its limit", map[string]any{"m": map[string]any{strings.Repeat("k", storage.MaxNameBytes): "x"}}),
		{"partition key at its limit", item(strings.Repeat("p", storage.MaxPKBytes), "accepted", nil)},
		{"sort key at its limit", item("accepted", strings.Repeat("s", storage.MaxSKBytes), nil)},
		{"400 KB", sized(item("accepted", "400 KB", nil), storage.MaxItemSize)},
		// DynamoDB counts a number's digits in pairs aligned on the point,
		// and a byte more for a negative one (storage.NumberSize).
		{"400 KB with numbers", sized(item("accepted", "400 KB with numbers", map[string]any{
			"a": num("1.2"), "b": num("-12"), "c": num("9.99"), "d": num("-0.001"),
		}), storage.MaxItemSize)},
	}
}

// refusedPastLimits are items one step past DynamoDB's limits, or
// otherwise refused, which every backend refuses with ErrInvalid.
func refusedPastLimits() []limitCase {
	c := func(name string, attrs map[string]any) limitCase {
		return limitCase{name, item("refused", name, attrs)}
	}
	return []limitCase{
		c("33 levels of maps", map[string]any{"v": nest(storage.MaxDepth, num("1"))}),
		c("33 levels of lists", map[string]any{"v": nestLists(storage.MaxDepth, "x")}),
		c("empty map at level 32", map[string]any{"v": nest(storage.MaxDepth-1, map[string]any{})}),
		c("empty list at level 32", map[string]any{"v": nestLists(storage.MaxDepth-1, []any{})}),
		c("33 levels in a list of maps", map[string]any{"v": []any{"ok", nest(storage.MaxDepth-1, []any{"x"})}}),
		c("39 digits", map[string]any{"v": num("123456789012345678901234567890123456789")}),
		c("39 digits of a fraction", map[string]any{"v": num("1.00000000000000000000000000000000000001")}),
		c("past the largest", map[string]any{"v": num("1E+126")}),
		c("past the largest negative", map[string]any{"v": num("-1E+126")}),
		c("past the smallest", map[string]any{"v": num("1E-131")}),
		c("past the smallest negative", map[string]any{"v": num("-0.9E-130")}),
		c("plus sign", map[string]any{"v": num("+1")}),
		c("leading zeros", map[string]any{"v": num("007")}),
		c("no digit before the point", map[string]any{"v": num(".5")}),
		c("not a number", map[string]any{"v": num("1,5")}),
		c("number in a map", map[string]any{"v": map[string]any{"n": num("1E+126")}}),
		c("empty name", map[string]any{"": "x"}),
		c("name too long", map[string]any{strings.Repeat("n", storage.MaxNameBytes+1): "x"}),
		c("empty map key", map[string]any{"m": map[string]any{"": "x"}}),
		c("map key too long", map[string]any{"m": map[string]any{strings.Repeat("k", storage.MaxNameBytes+1): "x"}}),
		c("key attribute among the attributes", map[string]any{storage.PKAttr: "x"}),
		c("string not UTF-8", map[string]any{"v": "a\xffb"}),
		c("Go type outside the contract", map[string]any{"v": 1}),
		{"empty partition key", item("", "refused", nil)},
		{"empty sort key", item("refused", "", nil)},
		{"partition key too long", item(strings.Repeat("p", storage.MaxPKBytes+1), "refused", nil)},
		{"sort key too long", item("refused", strings.Repeat("s", storage.MaxSKBytes+1), nil)},
		{"400 KB and a byte", sized(item("refused", "400 KB and a byte", nil), storage.MaxItemSize+1)},
		{"400 KB and a byte with numbers", sized(item("refused", "400 KB and a byte with numbers", map[string]any{
			"a": num("1.2"), "b": num("-12"),
		}), storage.MaxItemSize+1)},
	}
}

func testLimitsAccepted(t *testing.T, st storage.Store, table string) {
	for _, c := range acceptedAtLimits() {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.item.Validate())
			writeAll(t, st, table, c.item)
			requireItem(t, st, table, c.item)
		})
	}
}

func testLimitsRefused(t *testing.T, st storage.Store, table string) {
	ctx := context.Background()
	for i, c := range refusedPastLimits() {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorIs(t, c.item.Validate(), storage.ErrInvalid)
			// The refused item comes between two valid ones; none is
			// written.
			before := item("refused", key(2*i), map[string]any{"v": "before"})
			after := item("refused", key(2*i+1), map[string]any{"v": "after"})
			err := st.BatchWrite(ctx, table, []storage.Item{before, c.item, after})
			require.ErrorIs(t, err, storage.ErrInvalid)
			var we *storage.BatchWriteError
			require.ErrorAs(t, err, &we)
			require.Equal(t, []int{0, 1, 2}, we.Unwritten)
			for _, it := range []storage.Item{before, after} {
				_, err := st.GetItem(ctx, table, it.PK, it.SK)
				require.ErrorIs(t, err, storage.ErrItemNotFound, "nothing of the batch is written")
			}
		})
	}
	// A key too long is an item too large, as Update says too.
	err := st.BatchWrite(ctx, table, []storage.Item{item(strings.Repeat("p", storage.MaxPKBytes+1), "s", nil)})
	require.ErrorIs(t, err, storage.ErrItemTooLarge)
}

// testLimitsUpdate checks that an Update puts values under the same limits
// where it puts them: a SetKey value one level below its map attribute,
// appended elements one level below their list.
func testLimitsUpdate(t *testing.T, st storage.Store, table string) {
	const pk = "update"
	base := item(pk, "s", map[string]any{"m": map[string]any{}, "l": []any{}, "n": num("1")})
	writeAll(t, st, table, base)

	deepest := nest(storage.MaxDepth-2, "x") // a value of depth 31
	require.NoError(t, update(st, table, pk, "s", conds(storage.Exists("m")),
		storage.SetKey("m", "k", deepest), storage.Append("l", []any{deepest}), storage.Set("v", nest(storage.MaxDepth-1, "x"))))
	want := item(pk, "s", map[string]any{
		"m": map[string]any{"k": deepest}, "l": []any{deepest}, "n": num("1"), "v": nest(storage.MaxDepth-1, "x"),
	})
	requireItem(t, st, table, want)

	tooDeep := nest(storage.MaxDepth-1, "x") // depth 32, one level too many below an attribute
	for _, tc := range []struct {
		name   string
		action storage.Action
	}{
		{"set 33 levels", storage.Set("w", nest(storage.MaxDepth, "x"))},
		{"set key 33 levels", storage.SetKey("m", "k2", tooDeep)},
		{"append 33 levels", storage.Append("l", []any{tooDeep})},
		{"set a number past the largest", storage.Set("w", num("1E+126"))},
		{"set a plus sign", storage.Set("w", num("+1"))},
		{"add a plus sign", storage.Add("n", num("+1"))},
		{"set key empty", storage.SetKey("m", "", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := update(st, table, pk, "s", conds(storage.Exists("m")), tc.action)
			require.ErrorIs(t, err, storage.ErrInvalid)
			requireItem(t, st, table, want)
		})
	}
}
