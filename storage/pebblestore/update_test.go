package pebblestore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// The conformance suite (storagetest) checks Update's contract on every
// backend; these tests check what is particular to this one: the errors
// for updates DynamoDB refuses, number arithmetic, the closed state and
// dropped tables, and atomicity under heavy contention.

// seedItem writes one item and returns it.
func seedItem(t *testing.T, s *Store, table string, attrs map[string]any) storage.Item {
	t.Helper()
	it := storage.Item{PK: "p", SK: "s", Attrs: attrs}
	require.NoError(t, s.BatchWrite(context.Background(), table, []storage.Item{it}))
	return it
}

// requireStored requires the stored item to equal want.
func requireStored(t *testing.T, s *Store, table string, want storage.Item) {
	t.Helper()
	got, err := s.GetItem(context.Background(), table, want.PK, want.SK)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestUpdateRefusesWhatDynamoDBRefuses(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	before := seedItem(t, s, "tbl", map[string]any{
		"s": "text", "n": json.Number("5"), "l": []any{"a"}, "m": map[string]any{"k": "v"},
	})
	for _, tc := range []struct {
		name    string
		conds   []storage.Cond
		actions []storage.Action
	}{
		{"unsupported value type", nil, []storage.Action{storage.Set("v", int64(1))}},
		{"unsupported type nested in a map value", nil, []storage.Action{storage.SetKey("m", "x", []any{float64(1)})}},
		{"invalid number", nil, []storage.Action{storage.Set("v", json.Number("1e200"))}},
		{"invalid number to add", nil, []storage.Action{storage.Add("n", json.Number("x"))}},
		{"append of a non-list", nil, []storage.Action{{Kind: storage.ActionAppend, Attr: "l", Value: "b"}}},
		{"add of a non-number", nil, []storage.Action{{Kind: storage.ActionAdd, Attr: "n", Value: 1}}},
		{"set of the partition key", nil, []storage.Action{storage.Set("pk", "x")}},
		{"set of the sort key", nil, []storage.Action{storage.Set("sk", "x")}},
		{"empty attribute name", nil, []storage.Action{storage.Set("", "x")}},
		{"two actions on one attribute", nil, []storage.Action{storage.Set("v", "x"), storage.Add("v", "1")}},
		{"set and set key of one attribute", nil, []storage.Action{storage.SetKey("m", "a", "x"), storage.Set("m", "x")}},
		{"one key set twice", nil, []storage.Action{storage.SetKey("m", "a", "x"), storage.SetKey("m", "a", "y")}},
		{"unknown action", nil, []storage.Action{{Kind: 99, Attr: "v"}}},
		{"unknown condition", []storage.Cond{{Kind: 99, Attr: "v"}}, nil},
		{"condition on an empty name", []storage.Cond{storage.Exists("")}, nil},
		{"not contains of a number", []storage.Cond{{Kind: storage.CondNotContains, Attr: "l", Value: 1}}, nil},
		{"size at most of a string", []storage.Cond{{Kind: storage.CondSizeAtMost, Attr: "l", Value: "1"}}, nil},
		{"at most of an invalid number", []storage.Cond{storage.AtMost("n", "1e999")}, nil},
		{"append to a string", nil, []storage.Action{storage.Append("s", []any{"x"})}},
		{"add to a string", nil, []storage.Action{storage.Add("s", "1")}},
		// 5 + 1E-38 needs 39 significant digits, 5 + 9.99…E+125 too.
		{"sum with too many digits", nil, []storage.Action{storage.Add("n", json.Number("0."+strings.Repeat("0", 37)+"1"))}},
		{"sum of a huge number", nil, []storage.Action{storage.Add("n", "9.9999999999999999999999999999999999999E+125")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s", Conds: tc.conds, Actions: tc.actions})
			require.ErrorIs(t, err, storage.ErrInvalid)
			require.NotErrorIs(t, err, storage.ErrConditionFailed)
			requireStored(t, s, "tbl", before)
		})
	}
}

func TestUpdateKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	set := []storage.Action{storage.Set("v", "x")}
	for _, tc := range []struct {
		name   string
		pk, sk string
		want   error
	}{
		{"empty partition key", "", "s", storage.ErrInvalid},
		{"empty sort key", "p", "", storage.ErrInvalid},
		{"partition key too long", strings.Repeat("p", storage.MaxPKBytes+1), "s", storage.ErrItemTooLarge},
		{"sort key too long", "p", strings.Repeat("s", storage.MaxSKBytes+1), storage.ErrItemTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Update(ctx, storage.Update{Table: "tbl", PK: tc.pk, SK: tc.sk, Actions: set})
			require.ErrorIs(t, err, tc.want)
		})
	}
	// Keys at DynamoDB's limits are fine.
	pk, sk := strings.Repeat("p", storage.MaxPKBytes), strings.Repeat("s", storage.MaxSKBytes)
	require.NoError(t, s.Update(ctx, storage.Update{Table: "tbl", PK: pk, SK: sk, Actions: set}))
	requireStored(t, s, "tbl", storage.Item{PK: pk, SK: sk, Attrs: map[string]any{"v": "x"}})
	start, end := tableSpan(s.catalog.lookup("tbl").id)
	require.Equal(t, 1, rawCount(t, s, start, end), "only the valid item was written")
}

func TestUpdateNumbers(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	for _, tc := range []struct {
		start any // nil: the attribute is missing
		add   string
		want  string
	}{
		{nil, "1.50", "1.5"},
		{nil, "-0", "0"},
		{json.Number("1"), "2", "3"},
		{json.Number("0.1"), "0.2", "0.3"},
		{json.Number("1.25"), "-1.25", "0"},
		{json.Number("-7"), "2.5", "-4.5"},
		{json.Number("1e3"), "1E-3", "1000.001"},
		{json.Number("99999999999999999999999999999999999999"), "1", "100000000000000000000000000000000000000"},
		{json.Number("1E-130"), "1E-130", "0." + strings.Repeat("0", 129) + "2"},
	} {
		t.Run(fmt.Sprintf("%v+%s", tc.start, tc.add), func(t *testing.T) {
			attrs := map[string]any{}
			if tc.start != nil {
				attrs["n"] = tc.start
			}
			seedItem(t, s, "tbl", attrs)
			require.NoError(t, s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s",
				Actions: []storage.Action{storage.Add("n", json.Number(tc.add))}}))
			requireStored(t, s, "tbl", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"n": json.Number(tc.want)}})
		})
	}
}

func TestUpdateConditionEdgeCases(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	seedItem(t, s, "tbl", map[string]any{
		"s": "abc", "n": json.Number("5"), "b": []byte{1, 2}, "l": []any{json.Number("1"), []any{"x"}, "y"},
	})
	for _, tc := range []struct {
		name string
		cond storage.Cond
		want bool
	}{
		// NotContains looks into lists, and into strings for a
		// substring, as DynamoDB's contains does.
		{"not contains on a string", storage.NotContains("s", "b"), false},
		{"not contains on a string without it", storage.NotContains("s", "zz"), true},
		{"not contains of a number's text", storage.NotContains("l", "1"), true},
		{"not contains of a nested list's string", storage.NotContains("l", "x"), true},
		{"not contains of a string element", storage.NotContains("l", "y"), false},
		{"size of the partition key", storage.SizeAtMost("pk", 1), true},
		{"size of a binary", storage.SizeAtMost("b", 1), false},
		{"size of a number", storage.SizeAtMost("n", 100), false},
		{"at most on a string", storage.AtMost("s", "100"), false},
		{"at most by value", storage.AtMost("n", "5.000"), true},
		{"at most with an exponent", storage.AtMost("n", "4.9e0"), false},
		{"exists sort key", storage.Exists("sk"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s", Conds: []storage.Cond{tc.cond}})
			if tc.want {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, storage.ErrConditionFailed)
			}
		})
	}
}

func TestUpdateWithoutActionsCreatesTheItem(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	// As DynamoDB's UpdateItem without an update expression: the item
	// exists afterwards, with its key only.
	require.NoError(t, s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s"}))
	requireStored(t, s, "tbl", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{}})
}

func TestUpdateClosedCanceledDropped(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	set := storage.Update{Table: "tbl", PK: "p", SK: "s", Actions: []storage.Action{storage.Set("v", "x")}}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Update(canceled, set), context.Canceled)
	_, err = s.GetItem(ctx, "tbl", "p", "s")
	require.ErrorIs(t, err, storage.ErrItemNotFound)

	// A table deleted after the lookup: the commit is turned away, not
	// written into the deleted span.
	tbl := s.catalog.lookup("tbl")
	require.NoError(t, s.DeleteTable(ctx, "tbl"))
	tbl.mu.Lock()
	require.True(t, tbl.dropped)
	tbl.mu.Unlock()
	require.ErrorIs(t, s.Update(ctx, set), storage.ErrTableNotFound)
	start, end := tableSpan(tbl.id)
	require.Equal(t, 0, rawCount(t, s, start, end))

	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Update(ctx, set), storage.ErrClosed)
}

func TestUpdateIsDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	require.NoError(t, s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s",
		Conds:   []storage.Cond{storage.NotExists("pk")},
		Actions: []storage.Action{storage.Append("ids", []any{"a"}), storage.Set("m", map[string]any{"a": json.Number("1")})}}))
	require.NoError(t, s.Close())

	s, err = Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	requireStored(t, s, "tbl", storage.Item{PK: "p", SK: "s", Attrs: map[string]any{
		"ids": []any{"a"}, "m": map[string]any{"a": json.Number("1")},
	}})
}

// TestUpdateCounterUnderContention checks atomicity where a lost update
// shows: many goroutines ADD to one counter and SetKey into one map at
// once, and every increment and every key must be there at the end.
func TestUpdateCounterUnderContention(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	require.NoError(t, s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s",
		Actions: []storage.Action{storage.Set("m", map[string]any{})}}))
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				errs <- s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s",
					Conds: []storage.Cond{storage.Exists("m")},
					Actions: []storage.Action{
						storage.Add("n", "1"),
						storage.SetKey("m", fmt.Sprintf("%d-%d", w, i), true),
					}})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := s.GetItem(ctx, "tbl", "p", "s")
	require.NoError(t, err)
	require.Equal(t, json.Number(fmt.Sprint(workers*each)), got.Attrs["n"])
	require.Len(t, got.Attrs["m"], workers*each)
}

func TestUpdateItemTooLargeByManySmallAppends(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	// Empty lists count 4 bytes each in DynamoDB but take 2 here: the
	// size is computed, not guessed from the encoding.
	require.NoError(t, s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s",
		Actions: []storage.Action{storage.Append("l", manyEmptyLists(90_000))}}))
	err := s.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s",
		Actions: []storage.Action{storage.Append("l", manyEmptyLists(20_000))}})
	require.ErrorIs(t, err, storage.ErrItemTooLarge)
	got, err := s.GetItem(ctx, "tbl", "p", "s")
	require.NoError(t, err)
	require.Len(t, got.Attrs["l"], 90_000, "unchanged")
}
