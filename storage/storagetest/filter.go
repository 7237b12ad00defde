package storagetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// filterItems are the items of the filter fixture's partition, by sort
// key: attribute "a" of each type DynamoDB has, or none.
var filterItems = map[string]any{
	"bool":   true,
	"list":   []any{num("1")},
	"null":   nil,
	"num10":  num("10"),
	"num9":   num("9"),
	"num9.5": num("9.50"),
	"str":    "abc",
	"str-b":  "b",
}

// filterTests check Query's Filter: DynamoDB's meaning of each operator,
// and a Limit that counts the items examined.
func (s *suite) filterTests() []subtest {
	return []subtest{
		{"Meaning", s.testFilterMeaning},
		{"LimitExamines", s.testFilterLimit},
		{"Refused", s.testFilterRefused},
		{"ResumeUnfiltered", s.testResumeUnfiltered},
	}
}

// filterFixture writes filterItems, and an item without "a" ("missing"),
// to partition "p" of a new table.
func (s *suite) filterFixture(t *testing.T, st storage.Store) string {
	name := s.createTable(t, st)
	items := []storage.Item{item("p", "missing", map[string]any{"other": "x"})}
	for sk, v := range filterItems {
		items = append(items, item("p", sk, map[string]any{"a": v, "other": "x"}))
	}
	writeAll(t, st, name, items...)
	return name
}

// The answers are DynamoDB Local's (1.25.1), item for item.
func (s *suite) testFilterMeaning(t *testing.T) {
	st := s.open(t)
	name := s.filterFixture(t, st)
	cmp := func(op storage.FilterOp, v any) *storage.Filter {
		return &storage.Filter{Op: op, Attr: "a", Value: v}
	}
	everything := []string{"bool", "list", "missing", "null", "num10", "num9", "num9.5", "str", "str-b"}
	without := func(sks ...string) []string {
		var out []string
		for _, sk := range everything {
			keep := true
			for _, x := range sks {
				keep = keep && sk != x
			}
			if keep {
				out = append(out, sk)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		filter *storage.Filter
		want   []string
	}{
		{"= string", cmp(storage.FilterEq, "abc"), []string{"str"}},
		{"= number by value", cmp(storage.FilterEq, num("9.5")), []string{"num9.5"}},
		{"= bool", cmp(storage.FilterEq, true), []string{"bool"}},
		{"= null", cmp(storage.FilterEq, nil), []string{"null"}},
		{"= other type", cmp(storage.FilterEq, num("0")), nil},
		{"!= holds without the attribute", cmp(storage.FilterNe, "abc"), without("str")},
		{"!= number", cmp(storage.FilterNe, num("9.50")), without("num9.5")},
		{"!= null", cmp(storage.FilterNe, nil), without("null")},
		{"< string bytewise", cmp(storage.FilterLt, "b"), []string{"str"}},
		{"<= string", cmp(storage.FilterLe, "b"), []string{"str", "str-b"}},
		{"< number by value", cmp(storage.FilterLt, num("9.5")), []string{"num9"}},
		{"<= number", cmp(storage.FilterLe, num("9.5")), []string{"num9", "num9.5"}},
		{"> number", cmp(storage.FilterGt, num("9.5")), []string{"num10"}},
		{">= number", cmp(storage.FilterGe, num("9.5")), []string{"num10", "num9.5"}},
		{"> string", cmp(storage.FilterGt, "abc"), []string{"str-b"}},
		{"exists", &storage.Filter{Op: storage.FilterExists, Attr: "a"}, without("missing")},
		{"exists of no attribute", &storage.Filter{Op: storage.FilterExists, Attr: "nope"}, nil},
		{"begins_with", &storage.Filter{Op: storage.FilterBeginsWith, Attr: "a", Value: "ab"}, []string{"str"}},
		{"begins_with empty", &storage.Filter{Op: storage.FilterBeginsWith, Attr: "a", Value: ""}, []string{"str", "str-b"}},
		{"not <", &storage.Filter{Op: storage.FilterNot, Args: []storage.Filter{*cmp(storage.FilterLt, num("9.5"))}}, without("num9")},
		{"and", &storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{*cmp(storage.FilterGe, num("9")), *cmp(storage.FilterLt, num("10"))}}, []string{"num9", "num9.5"}},
		{"or", &storage.Filter{Op: storage.FilterOr, Args: []storage.Filter{*cmp(storage.FilterEq, "abc"), *cmp(storage.FilterEq, true), *cmp(storage.FilterEq, nil)}}, []string{"bool", "null", "str"}},
		{"another attribute", &storage.Filter{Op: storage.FilterEq, Attr: "other", Value: "x"}, everything},
		{"contains substring", &storage.Filter{Op: storage.FilterContains, Attr: "a", Value: "b"}, []string{"str", "str-b"}},
		{"contains list element", &storage.Filter{Op: storage.FilterContains, Attr: "a", Value: num("1")}, []string{"list"}},
		{"contains of a number", &storage.Filter{Op: storage.FilterContains, Attr: "a", Value: num("9")}, nil},
		{"size =", &storage.Filter{Op: storage.FilterEq, Attr: "a", Value: num("3"), Size: true}, []string{"str"}},
		{"size >=", &storage.Filter{Op: storage.FilterGe, Attr: "a", Value: num("1"), Size: true}, []string{"list", "str", "str-b"}},
		{"size <>", &storage.Filter{Op: storage.FilterNe, Attr: "a", Value: num("3"), Size: true}, without("str")},
		{"not size =", &storage.Filter{Op: storage.FilterNot, Args: []storage.Filter{{Op: storage.FilterEq, Attr: "a", Value: num("3"), Size: true}}}, without("str")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sortKeys(queryAll(t, st, storage.Query{Table: name, PK: "p", Filter: tc.filter}))
			require.Equal(t, tc.want, got)
			// The Go evaluation (Filter.Match) agrees with the store.
			var matched []string
			for _, sk := range everything {
				attrs := map[string]any{"other": "x"}
				if v, ok := filterItems[sk]; ok {
					attrs["a"] = v
				}
				if tc.filter.Match(attrs) {
					matched = append(matched, sk)
				}
			}
			require.Equal(t, tc.want, matched, "Filter.Match")
		})
	}
	t.Run("projection", func(t *testing.T) {
		got := queryAll(t, st, storage.Query{Table: name, PK: "p", Filter: cmp(storage.FilterEq, "abc"), Attrs: []string{"other"}})
		require.Len(t, got, 1)
		require.Equal(t, map[string]any{"other": "x"}, got[0].Attrs, "the filter reads a, the projection leaves it out")
	})
}

// With a filter, Limit counts the items examined: a query stops after
// them, says where, and resuming there finds every match once, in order,
// ascending and descending.
func (s *suite) testFilterLimit(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	var items []storage.Item
	var want []string
	for i := range 60 {
		v := num(fmt.Sprint(i % 7))
		items = append(items, item("p", key(i), map[string]any{"v": v}))
		if i%7 == 3 {
			want = append(want, key(i))
		}
	}
	writeAll(t, st, name, items...)
	f := &storage.Filter{Op: storage.FilterEq, Attr: "v", Value: num("3")}
	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprintf("desc=%v", desc), func(t *testing.T) {
			var got []string
			after, queries := "", 0
			for {
				queries++
				require.Less(t, queries, 100)
				it := st.Query(t.Context(), storage.Query{Table: name, PK: "p", Filter: f, Limit: 5, After: after, Desc: desc})
				page := drain(t, it)
				require.LessOrEqual(t, len(page), 1, "five items examined hold one match at most")
				got = append(got, sortKeys(page)...)
				next, stopped := it.Resume()
				if !stopped {
					break
				}
				require.NotEmpty(t, next)
				after = next
			}
			require.GreaterOrEqual(t, queries, 12, "60 items examined five at a time")
			exp := want
			if desc {
				exp = reversed(want)
			}
			require.Equal(t, exp, got)
		})
	}
}

// A filter DynamoDB would refuse is refused before anything is read.
func (s *suite) testFilterRefused(t *testing.T) {
	st := s.open(t)
	name := s.filterFixture(t, st)
	for _, f := range []storage.Filter{
		{Op: storage.FilterLt, Attr: "a", Value: true},
		{Op: storage.FilterGe, Attr: "a", Value: nil},
		{Op: storage.FilterBeginsWith, Attr: "a", Value: num("1")},
		{Op: storage.FilterEq, Attr: storage.PKAttr, Value: "p"},
		{Op: storage.FilterAnd, Args: []storage.Filter{{Op: storage.FilterExists, Attr: "a"}}},
		{Op: storage.FilterEq, Attr: "a", Value: []any{"x"}},
		{Op: storage.FilterContains, Attr: "a", Value: true},
		{Op: storage.FilterEq, Attr: "a", Value: "3", Size: true},
		{Op: storage.FilterExists, Attr: "a", Size: true},
	} {
		it := st.Query(t.Context(), storage.Query{Table: name, PK: "p", Filter: &f})
		require.False(t, it.Next())
		require.ErrorIs(t, it.Err(), storage.ErrBadFilter, "%+v", f)
		require.ErrorIs(t, it.Close(), storage.ErrBadFilter, "Close returns Err")
	}
}

// Without a filter, Resume says whether the limit cut the range.
func (s *suite) testResumeUnfiltered(t *testing.T) {
	st := s.open(t)
	name := s.filterFixture(t, st)
	it := st.Query(t.Context(), storage.Query{Table: name, PK: "p", Limit: 3})
	page := drain(t, it)
	require.Len(t, page, 3)
	after, stopped := it.Resume()
	require.True(t, stopped)
	require.Equal(t, page[2].SK, after)

	it = st.Query(t.Context(), storage.Query{Table: name, PK: "p", After: after})
	rest := drain(t, it)
	require.Len(t, rest, 6)
	_, stopped = it.Resume()
	require.False(t, stopped, "ran to the end of the range")
}

// sortKeys returns the items' sort keys, nil for none.
func sortKeys(items []storage.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.SK)
	}
	return out
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[len(s)-1-i] = x
	}
	return out
}
