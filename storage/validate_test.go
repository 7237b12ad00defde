package storage

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nest returns leaf inside n maps, one inside another.
func nest(n int, leaf any) any {
	for range n {
		leaf = map[string]any{"a": leaf}
	}
	return leaf
}

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want int
	}{
		{"scalar", "x", 1},
		{"nil", nil, 1},
		{"binary", []byte{1}, 1},
		{"empty list", []any{}, 2},
		{"empty map", map[string]any{}, 2},
		{"list of scalars", []any{"a", json.Number("1")}, 2},
		{"deepest element counts", []any{"a", []any{[]any{}}, map[string]any{"b": "c"}}, 4},
		{"31 maps", nest(MaxDepth-1, "x"), MaxDepth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Depth(tc.v))
		})
	}
}

func TestItemValidate(t *testing.T) {
	at := func(size int) Item {
		it := Item{PK: "p", SK: "s", Attrs: map[string]any{"v": ""}}
		it.Attrs["v"] = strings.Repeat("x", size-ItemSize(it))
		return it
	}
	attr := func(v any) Item { return Item{PK: "p", SK: "s", Attrs: map[string]any{"v": v}} }
	for _, tc := range []struct {
		name     string
		it       Item
		path     string // "" when valid
		reason   string
		tooLarge bool
	}{
		{name: "no attributes", it: Item{PK: "p", SK: "s"}},
		{name: "every type", it: attr([]any{nil, true, "s", json.Number("1.5"), []byte{0}, map[string]any{"k": []any{}}})},
		{name: "31 maps", it: attr(nest(MaxDepth-1, "x"))},
		{name: "32 maps", it: attr(nest(MaxDepth, "x")), path: "v" + strings.Repeat(".a", MaxDepth-1), reason: "nested deeper than 32 levels"},
		{name: "empty map at level 32", it: attr(nest(MaxDepth-1, map[string]any{})), path: "v" + strings.Repeat(".a", MaxDepth-1), reason: "nested deeper than 32 levels"},
		{name: "too deep in a list", it: attr([]any{"ok", nest(MaxDepth-1, []any{})}), path: "v[1]" + strings.Repeat(".a", MaxDepth-2), reason: "nested deeper than 32 levels"},
		{name: "bad number deep", it: attr(map[string]any{"m": []any{json.Number("+1")}}), path: "v.m[0]", reason: "not a JSON number"},
		{name: "number too precise", it: attr(json.Number("1.00000000000000000000000000000000000001")), path: "v", reason: "more than 38 significant digits"},
		{name: "Go int", it: attr(1), path: "v", reason: "value of type int, not a storage attribute type"},
		{name: "string not UTF-8", it: attr("\xff"), path: "v", reason: "string not valid UTF-8"},
		{name: "empty map key", it: attr(map[string]any{"": "x"}), path: `v.""`, reason: "map key empty"},
		{name: "map key at its limit", it: attr(map[string]any{strings.Repeat("k", MaxNameBytes): "x"})},
		{name: "map key too long", it: attr(map[string]any{strings.Repeat("k", MaxNameBytes+1): "x"}), path: `v."` + strings.Repeat("k", MaxNameBytes+1) + `"`, reason: "map key of 65536 bytes, over DynamoDB's limit of 65535"},
		{name: "empty name", it: Item{PK: "p", SK: "s", Attrs: map[string]any{"": "x"}}, path: `""`, reason: "attribute name empty"},
		{name: "name not UTF-8", it: Item{PK: "p", SK: "s", Attrs: map[string]any{"\xff": "x"}}, path: `"\xff"`, reason: "attribute name not valid UTF-8"},
		{name: "key attribute", it: Item{PK: "p", SK: "s", Attrs: map[string]any{"sk": "x"}}, path: "sk", reason: "an attribute named like a key attribute"},
		{name: "empty partition key", it: Item{SK: "s"}, reason: "empty partition key"},
		{name: "empty sort key", it: Item{PK: "p"}, reason: "empty sort key"},
		{name: "partition key at its limit", it: Item{PK: strings.Repeat("p", MaxPKBytes), SK: "s"}},
		{name: "partition key too long", it: Item{PK: strings.Repeat("p", MaxPKBytes+1), SK: "s"}, reason: "partition key of 2049 bytes, over DynamoDB's limit of 2048", tooLarge: true},
		{name: "sort key too long", it: Item{PK: "p", SK: strings.Repeat("s", MaxSKBytes+1)}, reason: "sort key of 1025 bytes, over DynamoDB's limit of 1024", tooLarge: true},
		{name: "sort key not UTF-8", it: Item{PK: "p", SK: "\xff"}, reason: "sort key not valid UTF-8"},
		{name: "400 KB", it: at(MaxItemSize)},
		{name: "400 KB and a byte", it: at(MaxItemSize + 1), reason: "item of 409601 bytes, over DynamoDB's limit of 409600", tooLarge: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.it.Validate()
			size, _, sizeErr := tc.it.validateSize()
			require.Equal(t, err, sizeErr)
			if tc.reason == "" {
				require.NoError(t, err)
				require.Equal(t, ItemSize(tc.it), size)
				return
			}
			require.Equal(t, InvalidError{Path: tc.path, Reason: tc.reason, tooLarge: tc.tooLarge}, err)
			require.ErrorIs(t, err, ErrInvalid)
			require.Equal(t, tc.tooLarge, errors.Is(err, ErrItemTooLarge))
		})
	}
}

// TestValidateCountsAsItemSize checks that Validate refuses exactly the
// items ItemSize puts over MaxItemSize, whatever their values.
func TestValidateCountsAsItemSize(t *testing.T) {
	attrs := map[string]any{
		"n": json.Number("-1.25"), "l": []any{nil, true, json.Number("12"), []byte("ab")},
		"m": map[string]any{"k": "v", "é": []any{}}, "fill": "",
	}
	it := Item{PK: "p", SK: "s", Attrs: attrs}
	attrs["fill"] = strings.Repeat("x", MaxItemSize-ItemSize(it))
	require.Equal(t, MaxItemSize, ItemSize(it))
	require.NoError(t, it.Validate())
	size, _, err := it.validateSize()
	require.NoError(t, err)
	require.Equal(t, MaxItemSize, size)
	attrs["fill"] = attrs["fill"].(string) + "x"
	require.ErrorIs(t, it.Validate(), ErrItemTooLarge)
}

func TestUpdateValidate(t *testing.T) {
	deepest := nest(MaxDepth-2, "x") // depth 31: the most one level down
	for _, tc := range []struct {
		name     string
		u        Update
		want     string // "" when valid
		tooLarge bool
	}{
		{name: "set", u: Update{Actions: []Action{Set("v", nest(MaxDepth-1, "x"))}}},
		{name: "set key", u: Update{Actions: []Action{SetKey("m", "k", deepest), SetKey("m", "j", "x")}}},
		{name: "append", u: Update{Actions: []Action{Append("l", []any{deepest})}}},
		{name: "conditions", u: Update{Conds: []Cond{Exists("pk"), NotExists("a"), NotContains("l", "x"), SizeAtMost("l", 3), AtMost("n", "1e3")}}},
		{name: "set too deep", u: Update{Actions: []Action{Set("v", nest(MaxDepth, "x"))}}, want: "nested deeper than 32 levels"},
		{name: "set key too deep", u: Update{Actions: []Action{SetKey("m", "k", nest(MaxDepth-1, "x"))}}, want: "nested deeper than 32 levels"},
		{name: "append too deep", u: Update{Actions: []Action{Append("l", []any{nest(MaxDepth-1, "x")})}}, want: "nested deeper than 32 levels"},
		{name: "set key empty", u: Update{Actions: []Action{SetKey("m", "", "x")}}, want: "map key empty"},
		{name: "set a plus sign", u: Update{Actions: []Action{Set("v", json.Number("+1"))}}, want: "not a JSON number"},
		{name: "add out of range", u: Update{Actions: []Action{Add("n", "1e126")}}, want: "number out of DynamoDB's range"},
		{name: "add a string", u: Update{Actions: []Action{{Kind: ActionAdd, Attr: "n", Value: "1"}}}, want: "operand of type string, want json.Number"},
		{name: "append a string slice", u: Update{Actions: []Action{{Kind: ActionAppend, Attr: "l", Value: []string{"x"}}}}, want: "want []any"},
		{name: "at most an int", u: Update{Conds: []Cond{{Kind: CondAtMost, Attr: "n", Value: 1}}}, want: "want json.Number"},
		{name: "at most not a number", u: Update{Conds: []Cond{AtMost("n", "1x")}}, want: "not a JSON number"},
		{name: "equal and any of", u: Update{Conds: []Cond{Equal("s", "x"), AnyOf(NotExists("pk"), AtMost("n", "3"), Equal("o", json.Number("2")))}}},
		{name: "equal a bool", u: Update{Conds: []Cond{Equal("s", true)}}, want: "want string or json.Number"},
		{name: "any of nothing", u: Update{Conds: []Cond{AnyOf()}}, want: "without alternatives"},
		{name: "any of inside any of", u: Update{Conds: []Cond{AnyOf(Exists("a"), AnyOf(Exists("b")))}}, want: "inside CondAnyOf"},
		{name: "any of a bad alternative", u: Update{Conds: []Cond{AnyOf(Exists("a"), Exists(""))}}, want: "alternative 1"},
		{name: "unknown condition", u: Update{Conds: []Cond{{Kind: 99, Attr: "a"}}}, want: "unknown condition kind 99"},
		{name: "unknown action", u: Update{Actions: []Action{{Kind: 99, Attr: "a"}}}, want: "unknown action kind 99"},
		{name: "condition without attribute", u: Update{Conds: []Cond{Exists("")}}, want: "attribute name empty"},
		{name: "action on a key attribute", u: Update{Actions: []Action{Set("sk", "x")}}, want: "an action on a key attribute"},
		{name: "two actions on one attribute", u: Update{Actions: []Action{Set("a", "x"), Add("a", "1")}}, want: "action 1 touches \"a\""},
		{name: "one key twice", u: Update{Actions: []Action{SetKey("m", "k", "x"), SetKey("m", "k", "y")}}, want: "sets key \"k\" of \"m\""},
		{name: "set after set key", u: Update{Actions: []Action{SetKey("m", "k", "x"), Set("m", map[string]any{})}}, want: "action 1 touches \"m\""},
		{name: "partition key too long", u: Update{PK: strings.Repeat("p", MaxPKBytes+1)}, want: "partition key of 2049 bytes", tooLarge: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.u
			if u.PK == "" {
				u.PK = "p"
			}
			u.SK = "s"
			err := u.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, tc.tooLarge, errors.Is(err, ErrItemTooLarge))
		})
	}
}

// TestRekeyed: a Checked item given shorter valid keys stays marked;
// given longer or invalid keys, it is validated again.
func TestRekeyed(t *testing.T) {
	checked, _, err := Item{PK: "p#0", SK: "t#AAAAAAAAAAAAAAAAAAAAAA", Attrs: map[string]any{"n": json.Number("1")}}.Checked()
	require.NoError(t, err)
	// A value changed in place shows whether the mark was kept: Valid
	// trusts a marked item.
	checked.Attrs["n"] = json.Number("01")
	shorter := checked.Rekeyed("p#1", "t#BBBBBBBBBBB")
	require.Equal(t, Key{PK: "p#1", SK: "t#BBBBBBBBBBB"}, shorter.Key())
	require.NoError(t, shorter.Valid(), "shorter keys keep the mark")
	require.NoError(t, checked.Rekeyed("p#1", "t#CCCCCCCCCCCCCCCCCCCCCC").Valid(), "keys as long keep it")
	require.ErrorIs(t, checked.Rekeyed("p#10", "t#CCCCCCCCCCCCCCCCCCCCCC").Valid(), ErrInvalid, "longer keys drop it")
	require.ErrorIs(t, checked.Rekeyed("p#1", "").Valid(), ErrInvalid, "an empty key drops it")
	require.ErrorIs(t, checked.Rekeyed("p#1", "t#\xff").Valid(), ErrInvalid, "a key not UTF-8 drops it")
	checked.Attrs["n"] = json.Number("1")
	require.NoError(t, checked.Rekeyed("p#10", "t#CCCCCCCCCCCCCCCCCCCCCC").Valid(), "validated again, and valid")
}

// TestChecked: a Checked item is not validated again while it keeps its
// shape, and is when its keys change length or it gains or loses an
// attribute; an item built by hand always is.
func TestChecked(t *testing.T) {
	it := Item{PK: "p#0", SK: "s", Attrs: map[string]any{"n": json.Number("1")}}
	checked, size, err := it.Checked()
	require.NoError(t, err)
	require.Equal(t, ItemSize(it), size)
	require.NoError(t, checked.Valid())

	// The mark trusts the caller not to change a value in place: that
	// is the validation it saves.
	checked.Attrs["n"] = json.Number("01")
	require.NoError(t, checked.Valid())
	require.ErrorIs(t, checked.Validate(), ErrInvalid)
	checked.Attrs["n"] = json.Number("1")

	same := checked
	same.PK = "p#1" // another shard, the same length
	require.NoError(t, same.Valid())

	longer := checked
	longer.PK = strings.Repeat("p", MaxPKBytes+1)
	require.ErrorIs(t, longer.Valid(), ErrInvalid)

	checked.Attrs["pk"] = "a key attribute"
	require.ErrorIs(t, checked.Valid(), ErrInvalid, "an attribute added since")
	delete(checked.Attrs, "pk")
	require.NoError(t, checked.Valid())

	byHand := Item{PK: "p#0", SK: "s", Attrs: map[string]any{"n": json.Number("01")}}
	require.ErrorIs(t, byHand.Valid(), ErrInvalid)
	require.ErrorIs(t, byHand.Rekeyed("p", "s").Valid(), ErrInvalid, "rekeying marks nothing")
	_, _, err = byHand.Checked()
	require.ErrorIs(t, err, ErrInvalid)
}

// TestNumbersCanonical: Checked notes whether every number of an item,
// nested ones too, is canonical; the note goes with the mark.
func TestNumbersCanonical(t *testing.T) {
	it := Item{PK: "p", SK: "s", Attrs: map[string]any{"a": json.Number("1.5"), "m": map[string]any{"l": []any{json.Number("10")}}}}
	require.False(t, it.NumbersCanonical(), "not checked")
	checked, _, err := it.Checked()
	require.NoError(t, err)
	require.True(t, checked.NumbersCanonical())
	require.True(t, checked.Rekeyed("q", "s").NumbersCanonical(), "the mark kept")
	require.False(t, checked.Rekeyed("pp", "ss").NumbersCanonical(), "the mark dropped")
	checked.Attrs["b"] = true
	require.False(t, checked.NumbersCanonical(), "an attribute more")

	it.Attrs = map[string]any{"a": json.Number("1.5"), "m": map[string]any{"l": []any{json.Number("1e1")}}}
	checked, _, err = it.Checked()
	require.NoError(t, err)
	require.False(t, checked.NumbersCanonical())
}
