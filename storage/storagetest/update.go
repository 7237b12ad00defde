package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// updateTests check the conditional Update: every condition and action
// kind, the errors, names that would trip an expression parser, and
// appends racing on one item. All of them share one table, each check in
// its own partition, so the group creates a single table however many
// checks it has; the unknown-table check needs none.
func (s *suite) updateTests() []subtest {
	return []subtest{
		{"SharedTable", s.testUpdateSharedTable},
		{"UnknownTable", s.testUpdateUnknownTable},
	}
}

// updateCheck is one check run against the shared table; it uses only
// partition pk.
type updateCheck struct {
	name string
	fn   func(t *testing.T, st storage.Store, table, pk string)
}

func (s *suite) testUpdateSharedTable(t *testing.T) {
	st := s.open(t)
	table := s.createTable(t, st)
	for _, c := range []updateCheck{
		{"CreateOnce", testUpdateCreateOnce},
		{"Conditions", testUpdateConditions},
		{"ConditionsOnMissingItem", testUpdateConditionsOnMissingItem},
		{"Set", testUpdateSet},
		{"SetKey", testUpdateSetKey},
		{"SetKeyOnMissingMap", testUpdateSetKeyOnMissingMap},
		{"Append", testUpdateAppend},
		{"Add", testUpdateAdd},
		{"ItemTooLarge", testUpdateItemTooLarge},
		{"ExpressionLimits", testUpdateExpressionLimits},
		{"Names", testUpdateNames},
		{"AppendRace", testUpdateAppendRace},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, st, table, c.name) })
	}
}

// update runs one Update of item pk/sk.
func update(st storage.Store, table, pk, sk string, conds []storage.Cond, actions ...storage.Action) error {
	return st.Update(context.Background(), storage.Update{Table: table, PK: pk, SK: sk, Conds: conds, Actions: actions})
}

// conds is a shorthand for a list of conditions.
func conds(cs ...storage.Cond) []storage.Cond { return cs }

// requireMissing requires item pk/sk not to exist.
func requireMissing(t *testing.T, st storage.Store, table, pk, sk string) {
	t.Helper()
	_, err := st.GetItem(context.Background(), table, pk, sk)
	require.ErrorIs(t, err, storage.ErrItemNotFound, "%q/%q exists", pk, sk)
}

func testUpdateCreateOnce(t *testing.T, st storage.Store, table, pk string) {
	first := item(pk, "ms", map[string]any{"ids": []any{"e1"}, "speed": map[string]any{"e1": num("88.5")}})
	create := func(it storage.Item) error {
		return update(st, table, it.PK, it.SK, conds(storage.NotExists(storage.PKAttr)),
			storage.Set("ids", it.Attrs["ids"]), storage.Set("speed", it.Attrs["speed"]))
	}
	require.NoError(t, create(first))
	requireItem(t, st, table, first)

	second := item(pk, "ms", map[string]any{"ids": []any{"e2"}, "speed": map[string]any{"e2": num("1")}})
	require.ErrorIs(t, create(second), storage.ErrConditionFailed, "the item exists")
	requireItem(t, st, table, first)
}

// conditionItem is the item the condition checks run against.
func conditionItem(pk, sk string) storage.Item {
	return item(pk, sk, map[string]any{
		"s": "abc",
		"n": num("5"),
		"b": []byte{1, 2},
		"l": []any{"a", "b", num("7")},
		"m": map[string]any{"k": "v"},
	})
}

func testUpdateConditions(t *testing.T, st storage.Store, table, pk string) {
	for i, tc := range []struct {
		name  string
		conds []storage.Cond
		holds bool
	}{
		{"exists", conds(storage.Exists("s")), true},
		{"exists on a missing attribute", conds(storage.Exists("x")), false},
		{"exists on the partition key", conds(storage.Exists(storage.PKAttr)), true},
		{"exists on the sort key", conds(storage.Exists(storage.SKAttr)), true},
		{"not exists", conds(storage.NotExists("s")), false},
		{"not exists on a missing attribute", conds(storage.NotExists("x")), true},
		{"not exists on the partition key", conds(storage.NotExists(storage.PKAttr)), false},
		{"not contains a string in the list", conds(storage.NotContains("l", "a")), false},
		{"not contains a string not in the list", conds(storage.NotContains("l", "c")), true},
		{"not contains on a missing attribute", conds(storage.NotContains("x", "a")), true},
		{"size of a list at its length", conds(storage.SizeAtMost("l", 3)), true},
		{"size of a list under its length", conds(storage.SizeAtMost("l", 2)), false},
		{"size of a map at its length", conds(storage.SizeAtMost("m", 1)), true},
		{"size of a map under its length", conds(storage.SizeAtMost("m", 0)), false},
		{"size of a string at its length", conds(storage.SizeAtMost("s", 3)), true},
		{"size of a string under its length", conds(storage.SizeAtMost("s", 2)), false},
		{"size of a binary at its length", conds(storage.SizeAtMost("b", 2)), true},
		{"size of a binary under its length", conds(storage.SizeAtMost("b", 1)), false},
		{"size of a missing attribute", conds(storage.SizeAtMost("x", 100)), false},
		{"at most the same number", conds(storage.AtMost("n", num("5"))), true},
		{"at most a larger number written otherwise", conds(storage.AtMost("n", num("1e1"))), true},
		{"at most a smaller number", conds(storage.AtMost("n", num("4.99"))), false},
		{"at most on a missing attribute", conds(storage.AtMost("x", num("100"))), false},
		{"all hold", conds(storage.Exists("s"), storage.NotContains("l", "c"), storage.AtMost("n", num("5"))), true},
		{"one of them fails", conds(storage.Exists("s"), storage.NotContains("l", "a"), storage.AtMost("n", num("5"))), false},
		{"equal string", conds(storage.Equal("s", "abc")), true},
		{"equal another string", conds(storage.Equal("s", "abd")), false},
		{"equal number written otherwise", conds(storage.Equal("n", num("5.0"))), true},
		{"equal another number", conds(storage.Equal("n", num("6"))), false},
		{"equal: a number is not its string", conds(storage.Equal("n", "5")), false},
		{"equal on a missing attribute", conds(storage.Equal("x", "abc")), false},
		{"any of, the first holds", conds(storage.AnyOf(storage.Exists("s"), storage.Equal("s", "zzz"))), true},
		{"any of, the last holds", conds(storage.AnyOf(storage.NotExists(storage.PKAttr), storage.AtMost("n", num("4")), storage.Equal("s", "abc"))), true},
		{"any of, none holds", conds(storage.AnyOf(storage.NotExists(storage.PKAttr), storage.AtMost("n", num("4")), storage.Equal("s", "zzz"))), false},
		{"any of, and another that fails", conds(storage.AnyOf(storage.Exists("s")), storage.Exists("x")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := conditionItem(pk, fmt.Sprintf("c%02d", i))
			writeAll(t, st, table, before)
			err := update(st, table, before.PK, before.SK, tc.conds, storage.Set("applied", true))
			if !tc.holds {
				require.ErrorIs(t, err, storage.ErrConditionFailed)
				requireItem(t, st, table, before)
				return
			}
			require.NoError(t, err)
			after := conditionItem(before.PK, before.SK)
			after.Attrs["applied"] = true
			requireItem(t, st, table, after)
		})
	}
}

func testUpdateConditionsOnMissingItem(t *testing.T, st storage.Store, table, pk string) {
	// A missing item has no attributes, not even its key attributes.
	for i, tc := range []struct {
		name  string
		cond  storage.Cond
		holds bool
	}{
		{"exists on the partition key", storage.Exists(storage.PKAttr), false},
		{"exists", storage.Exists("x"), false},
		{"not exists on the partition key", storage.NotExists(storage.PKAttr), true},
		{"not exists", storage.NotExists("x"), true},
		{"not contains", storage.NotContains("l", "a"), true},
		{"size at most", storage.SizeAtMost("l", 100), false},
		{"at most", storage.AtMost("n", num("100")), false},
		{"equal", storage.Equal("s", "abc"), false},
		{"any of, one holds", storage.AnyOf(storage.NotExists(storage.PKAttr), storage.Equal("owner", "me")), true},
		{"any of, none holds", storage.AnyOf(storage.Exists(storage.PKAttr), storage.Equal("owner", "me")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk := fmt.Sprintf("c%02d", i)
			err := update(st, table, pk, sk, conds(tc.cond), storage.Set("applied", true))
			if !tc.holds {
				require.ErrorIs(t, err, storage.ErrConditionFailed)
				requireMissing(t, st, table, pk, sk)
				return
			}
			require.NoError(t, err)
			requireItem(t, st, table, item(pk, sk, map[string]any{"applied": true}))
		})
	}
}

func testUpdateSet(t *testing.T, st storage.Store, table, pk string) {
	writeAll(t, st, table, item(pk, "s", map[string]any{"keep": "k", "v": num("1")}))
	// Set replaces a value of another type, adds a new attribute, and
	// leaves the others alone.
	require.NoError(t, update(st, table, pk, "s", nil,
		storage.Set("v", map[string]any{"now": "a map"}),
		storage.Set("new", []any{"x", num("2.5"), nil, []byte{3}}),
	))
	requireItem(t, st, table, item(pk, "s", map[string]any{
		"keep": "k", "v": map[string]any{"now": "a map"}, "new": []any{"x", num("2.5"), nil, []byte{3}},
	}))
	// Without conditions, Set creates a missing item.
	require.NoError(t, update(st, table, pk, "created", nil, storage.Set("v", "x")))
	requireItem(t, st, table, item(pk, "created", map[string]any{"v": "x"}))
}

func testUpdateSetKey(t *testing.T, st storage.Store, table, pk string) {
	writeAll(t, st, table, item(pk, "s", map[string]any{"m": map[string]any{"a": num("1"), "b": "keep"}}))
	guard := conds(storage.Exists("m"))
	// A new key, and an existing one replaced, in one update.
	require.NoError(t, update(st, table, pk, "s", guard,
		storage.SetKey("m", "c", []any{"new"}),
		storage.SetKey("m", "a", num("2")),
	))
	requireItem(t, st, table, item(pk, "s", map[string]any{"m": map[string]any{"a": num("2"), "b": "keep", "c": []any{"new"}}}))
}

func testUpdateSetKeyOnMissingMap(t *testing.T, st storage.Store, table, pk string) {
	before := item(pk, "s", map[string]any{"other": "x", "str": "not a map"})
	writeAll(t, st, table, before)
	for _, tc := range []struct {
		name  string
		sk    string
		conds []storage.Cond
		attr  string
	}{
		{"guarded, item without the map", "s", conds(storage.Exists("m")), "m"},
		{"guarded, missing item", "missing", conds(storage.Exists("m")), "m"},
		{"unguarded, item without the map", "s", nil, "m"},
		{"unguarded, missing item", "missing", nil, "m"},
		{"unguarded, attribute not a map", "s", nil, "str"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := update(st, table, pk, tc.sk, tc.conds, storage.SetKey(tc.attr, "k", "v"))
			require.ErrorIs(t, err, storage.ErrConditionFailed)
			if tc.sk == "missing" {
				requireMissing(t, st, table, pk, tc.sk)
			} else {
				requireItem(t, st, table, before)
			}
		})
	}
}

func testUpdateAppend(t *testing.T, st storage.Store, table, pk string) {
	// The list is created by the first append, on a missing item, and
	// extended in order by the next.
	require.NoError(t, update(st, table, pk, "s", nil, storage.Append("l", []any{"a"})))
	requireItem(t, st, table, item(pk, "s", map[string]any{"l": []any{"a"}}))
	require.NoError(t, update(st, table, pk, "s", nil, storage.Append("l", []any{"b", num("3"), map[string]any{"k": true}})))
	requireItem(t, st, table, item(pk, "s", map[string]any{"l": []any{"a", "b", num("3"), map[string]any{"k": true}}}))
	// On an existing item without the list, too.
	require.NoError(t, update(st, table, pk, "s", conds(storage.Exists(storage.PKAttr)), storage.Append("l2", []any{"x"})))
	requireItem(t, st, table, item(pk, "s", map[string]any{
		"l": []any{"a", "b", num("3"), map[string]any{"k": true}}, "l2": []any{"x"},
	}))
}

func testUpdateAdd(t *testing.T, st storage.Store, table, pk string) {
	// A missing attribute counts as zero.
	require.NoError(t, update(st, table, pk, "s", nil, storage.Add("n", num("1.5"))))
	requireItem(t, st, table, item(pk, "s", map[string]any{"n": num("1.5")}))
	require.NoError(t, update(st, table, pk, "s", nil, storage.Add("n", num("2"))))
	requireItem(t, st, table, item(pk, "s", map[string]any{"n": num("3.5")}))
	require.NoError(t, update(st, table, pk, "s", nil, storage.Add("n", num("-10"))))
	requireItem(t, st, table, item(pk, "s", map[string]any{"n": num("-6.5")}))
	// ADD next to other actions, under a condition on the number itself.
	require.NoError(t, update(st, table, pk, "s", conds(storage.AtMost("n", num("0"))),
		storage.Add("n", num("6.5")), storage.Set("s", "x")))
	requireItem(t, st, table, item(pk, "s", map[string]any{"n": num("0"), "s": "x"}))
}

func testUpdateItemTooLarge(t *testing.T, st storage.Store, table, pk string) {
	big := strings.Repeat("x", 300*1024)
	require.NoError(t, update(st, table, pk, "s", nil, storage.Set("big", big), storage.Append("l", []any{"a"})))
	before := item(pk, "s", map[string]any{"big": big, "l": []any{"a"}})
	requireItem(t, st, table, before)

	more := strings.Repeat("y", 150*1024)
	for _, tc := range []struct {
		name   string
		action storage.Action
	}{
		{"set", storage.Set("more", more)},
		{"append", storage.Append("l", []any{more})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := update(st, table, pk, "s", nil, tc.action)
			require.ErrorIs(t, err, storage.ErrItemTooLarge)
			requireItem(t, st, table, before)
		})
	}
	// A new item over the limit is not created.
	err := update(st, table, pk, "new", nil, storage.Set("big", big), storage.Set("more", more))
	require.ErrorIs(t, err, storage.ErrItemTooLarge)
	requireMissing(t, st, table, pk, "new")
}

// awkwardNames are attribute names and map keys that mean something in
// DynamoDB's expression syntax: paths, list indexes, placeholders.
var awkwardNames = []string{"a.b", "[0]", "l[0]", "a.b[1].c", "#n", ":v", "with space", " lead", ".", "é#:[ ]"}

func testUpdateNames(t *testing.T, st storage.Store, table, pk string) {
	want := map[string]any{}
	for i, name := range awkwardNames {
		t.Run(name, func(t *testing.T) {
			// Set creates the map; SetKey, Append and Add use the name as
			// a map key and in new attribute names; the conditions name
			// the same attributes.
			m, l, n := name, name+" list", name+" n"
			require.NoError(t, update(st, table, pk, "s", conds(storage.NotExists(m), storage.NotContains(l, name)),
				storage.Set(m, map[string]any{}),
				storage.Append(l, []any{name}),
				storage.Add(n, num(fmt.Sprint(i+1))),
			))
			require.NoError(t, update(st, table, pk, "s", conds(storage.Exists(m), storage.SizeAtMost(l, 1), storage.AtMost(n, num(fmt.Sprint(i+1)))),
				storage.SetKey(m, name, name),
				storage.SetKey(m, "plain", true),
			))
			require.ErrorIs(t, update(st, table, pk, "s", conds(storage.NotContains(l, name)), storage.Set(m, "changed")),
				storage.ErrConditionFailed, "the list holds the name")
			want[m] = map[string]any{name: name, "plain": true}
			want[l] = []any{name}
			want[n] = num(fmt.Sprint(i + 1))
			requireItem(t, st, table, item(pk, "s", want))
		})
	}
}

func testUpdateAppendRace(t *testing.T, st storage.Store, table, pk string) {
	const writers = 16
	require.NoError(t, update(st, table, pk, "ms", conds(storage.NotExists(storage.PKAttr)),
		storage.Set("ids", []any{}), storage.Set("f", map[string]any{})))
	ids := make([]string, writers)
	for i := range ids {
		ids[i] = fmt.Sprintf("event-%02d", i)
	}
	// Each id is appended by two goroutines at once, as a retried write
	// racing its original does: exactly one of them may store it.
	errs := make([]error, 2*writers)
	var wg sync.WaitGroup
	for i := range errs {
		id := ids[i%writers]
		wg.Go(func() {
			errs[i] = update(st, table, pk, "ms", conds(storage.NotContains("ids", id), storage.Exists("f")),
				storage.Append("ids", []any{id}), storage.SetKey("f", id, num(fmt.Sprint(i%writers))))
		})
	}
	wg.Wait()
	stored := make([]int, writers)
	for i, err := range errs {
		if err == nil {
			stored[i%writers]++
			continue
		}
		require.True(t, errors.Is(err, storage.ErrConditionFailed), "writer %d: %v", i, err)
	}
	for i, n := range stored {
		require.Equal(t, 1, n, "id %q stored by %d writers", ids[i], n)
	}

	// A late retry of every id changes nothing.
	for _, id := range ids {
		require.ErrorIs(t, update(st, table, pk, "ms", conds(storage.NotContains("ids", id)),
			storage.Append("ids", []any{id})), storage.ErrConditionFailed)
	}

	got, err := st.GetItem(context.Background(), table, pk, "ms")
	require.NoError(t, err)
	list, ok := got.Attrs["ids"].([]any)
	require.True(t, ok, "ids is a list: %T", got.Attrs["ids"])
	require.Len(t, list, writers, "every id exactly once")
	var gotIDs []string
	for _, v := range list {
		s, ok := v.(string)
		require.True(t, ok, "id %v is a string", v)
		gotIDs = append(gotIDs, s)
	}
	slices.Sort(gotIDs)
	require.Equal(t, ids, gotIDs)
	fields, ok := got.Attrs["f"].(map[string]any)
	require.True(t, ok, "f is a map: %T", got.Attrs["f"])
	require.Len(t, fields, writers)
	for i, id := range ids {
		require.Equal(t, normalise(num(fmt.Sprint(i))), normalise(fields[id]), "field of %q", id)
	}
}

func (s *suite) testUpdateUnknownTable(t *testing.T) {
	st := s.open(t)
	name := s.tableName(t)
	err := update(st, name, "p", "s", nil, storage.Set("v", "x"))
	require.ErrorIs(t, err, storage.ErrTableNotFound)
	err = update(st, name, "p", "s", conds(storage.NotExists(storage.PKAttr)), storage.Append("l", []any{"x"}))
	require.ErrorIs(t, err, storage.ErrTableNotFound)
}

// testUpdateExpressionLimits checks DynamoDB's 300 operators of one
// expression at the boundary: 100 NOT contains(...) conditions take 299
// (NOT, contains, and 99 ANDs), one condition more is refused before
// anything is written, by every backend alike.
func testUpdateExpressionLimits(t *testing.T, st storage.Store, table, pk string) {
	notContaining := func(n int) []storage.Cond {
		cs := make([]storage.Cond, n)
		for i := range cs {
			cs[i] = storage.NotContains("ids", fmt.Sprint("id", i))
		}
		return cs
	}
	at := append(notContaining(100), storage.NotExists("x")) // and one AND: 301
	require.Equal(t, 301, storage.Update{Conds: at}.Cost().CondOperators)
	err := update(st, table, pk, "over", at, storage.Set("v", "1"))
	require.ErrorIs(t, err, storage.ErrTooComplex)
	requireMissing(t, st, table, pk, "over")

	within := notContaining(100)
	require.Equal(t, 299, storage.Update{Conds: within}.Cost().CondOperators)
	require.NoError(t, update(st, table, pk, "within", within, storage.Set("v", "1")))

	// Update expressions: appends (list_append and if_not_exists, two
	// operators each) reach the 4 KB of an expression first. The most
	// that fit by storage's count are accepted, one more refused.
	appends := func(n int) []storage.Action {
		acts := make([]storage.Action, n)
		for i := range acts {
			acts[i] = storage.Append(fmt.Sprint("l", i), []any{"x"})
		}
		return acts
	}
	n := 1
	for (storage.Update{Actions: appends(n + 1)}).Cost().Fits() {
		n++
	}
	require.Greater(t, n, 50)
	require.NoError(t, update(st, table, pk, "appends", nil, appends(n)...))
	require.ErrorIs(t, update(st, table, pk, "more appends", nil, appends(n+1)...), storage.ErrTooComplex)
	requireMissing(t, st, table, pk, "more appends")
}
