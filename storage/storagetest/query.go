package storagetest

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// querySKs are the sort keys of the query fixture's partition "p", in
// bytewise order: shared prefixes ("a", "a#", "a#1", "ab") and non-ASCII
// keys whose UTF-8 bytes sort after every ASCII letter ("é" is C3 A9, "日"
// is E6 97 A5).
var querySKs = []string{"a", "a#", "a#1", "ab", "b", "z", "é", "日"}

// queryNeighbours are partitions next to "p" in key space that must never
// leak into its queries.
var queryNeighbours = []string{"P", "o", "p#", "pa", "q"}

// queryTests check Query against one fixture table.
func (s *suite) queryTests() []subtest {
	return []subtest{
		{"Ranges", s.testQueryRanges},
		{"Projection", s.testQueryProjection},
		{"InPlace", s.testQueryInPlace},
	}
}

// queryFixture creates the fixture table: partition "p" with querySKs and
// neighbouring partitions holding the same sort keys.
func (s *suite) queryFixture(t *testing.T, st storage.Store) string {
	name := s.createTable(t, st)
	var items []storage.Item
	for _, pk := range append([]string{"p"}, queryNeighbours...) {
		for i, sk := range querySKs {
			items = append(items, item(pk, sk, map[string]any{"part": pk, "i": num(strconv.Itoa(i)), "extra": "x"}))
		}
	}
	writeAll(t, st, name, items...)
	return name
}

func (s *suite) testQueryRanges(t *testing.T) {
	st := s.open(t)
	name := s.queryFixture(t, st)
	all := querySKs
	rev := func(sks []string) []string {
		out := make([]string, len(sks))
		for i, sk := range sks {
			out[len(sks)-1-i] = sk
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    storage.Query
		want []string
	}{
		{"everything", storage.Query{}, all},
		{"everything descending", storage.Query{Desc: true}, rev(all)},
		{"inclusive bounds", storage.Query{Low: "a#", High: "ab"}, []string{"a#", "a#1", "ab"}},
		{"inclusive bounds descending", storage.Query{Low: "a#", High: "ab", Desc: true}, []string{"ab", "a#1", "a#"}},
		{"one key", storage.Query{Low: "a", High: "a"}, []string{"a"}},
		{"bounds between keys", storage.Query{Low: "a#0", High: "aa"}, []string{"a#1"}},
		{"empty high is unbounded", storage.Query{Low: "b"}, []string{"b", "z", "é", "日"}},
		{"empty high is unbounded descending", storage.Query{Low: "b", Desc: true}, []string{"日", "é", "z", "b"}},
		{"high only", storage.Query{High: "a#"}, []string{"a", "a#"}},
		{"non-ASCII bounds", storage.Query{Low: "z", High: "é"}, []string{"z", "é"}},
		{"low above high", storage.Query{Low: "b", High: "a"}, nil},
		{"limit", storage.Query{Limit: 2}, []string{"a", "a#"}},
		{"limit descending", storage.Query{Limit: 2, Desc: true}, []string{"日", "é"}},
		{"limit above count", storage.Query{Limit: 100}, all},
		{"after", storage.Query{After: "a#"}, all[2:]},
		{"after descending", storage.Query{After: "a#", Desc: true}, []string{"a"}},
		{"after a missing key", storage.Query{After: "a#0"}, all[2:]},
		{"after a missing key descending", storage.Query{After: "aa", Desc: true}, []string{"a#1", "a#", "a"}},
		{"after with bounds", storage.Query{Low: "a#", High: "z", After: "ab"}, []string{"b", "z"}},
		{"after with bounds descending", storage.Query{Low: "a#", High: "z", After: "ab", Desc: true}, []string{"a#1", "a#"}},
		{"after with limit", storage.Query{After: "a", Limit: 3}, all[1:4]},
		{"after with limit descending", storage.Query{After: "日", Limit: 2, Desc: true}, []string{"é", "z"}},
		{"after the last key", storage.Query{After: "日"}, nil},
		{"after the first key descending", storage.Query{After: "a", Desc: true}, nil},
		{"after below low", storage.Query{Low: "b", After: "a"}, []string{"b", "z", "é", "日"}},
		{"after above high descending", storage.Query{High: "a#", After: "b", Desc: true}, []string{"a#", "a"}},
		{"unknown partition", storage.Query{PK: "nope"}, nil},
		{"partition sharing a prefix", storage.Query{PK: "p#", Low: "z"}, []string{"z", "é", "日"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Table = name
			if q.PK == "" {
				q.PK = "p"
			}
			got := queryAll(t, st, q)
			var sks []string
			for i, it := range got {
				require.Equal(t, q.PK, it.PK, "item %d is of the queried partition", i)
				require.Equal(t, q.PK, it.Attrs["part"], "item %d is the one written under its key", i)
				sks = append(sks, it.SK)
			}
			require.Equal(t, tc.want, sks)
		})
	}
}

func (s *suite) testQueryProjection(t *testing.T) {
	st := s.open(t)
	name := s.queryFixture(t, st)
	for _, tc := range []struct {
		name  string
		attrs []string
		want  map[string]any
	}{
		{"all attributes", nil, map[string]any{"part": "p", "i": num("3"), "extra": "x"}},
		{"one attribute", []string{"i"}, map[string]any{"i": num("3")}},
		{"two attributes", []string{"extra", "part"}, map[string]any{"part": "p", "extra": "x"}},
		{"a missing attribute", []string{"i", "missing"}, map[string]any{"i": num("3")}},
		{"no attributes", []string{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queryAll(t, st, storage.Query{Table: name, PK: "p", Low: "ab", High: "ab", Attrs: tc.attrs})
			require.Equal(t, []storage.Item{normaliseItem(item("p", "ab", tc.want))}, normaliseItems(got))
		})
	}
}

// A reader that never asks for Item reads every item's sort key and the
// attributes of the projection in place, stops Attrs when it likes, and
// pages on from where its limit stopped the query.
func (s *suite) testQueryInPlace(t *testing.T) {
	st := s.open(t)
	name := s.queryFixture(t, st)
	var sks []string
	q := storage.Query{Table: name, PK: "p", Limit: 3, Attrs: []string{"i", "part"}}
	for {
		it := st.Query(t.Context(), q)
		for it.Next() {
			sk := strings.Clone(it.SortKey())
			sks = append(sks, sk)
			seen := 0
			require.NoError(t, it.Attrs(func(name string, v any) bool {
				seen++
				require.Contains(t, []string{"i", "part"}, name)
				if name == "i" {
					require.Equal(t, json.Number(strconv.Itoa(slices.Index(querySKs, sk))), v)
				} else {
					require.Equal(t, "p", v)
				}
				return false // one attribute is enough
			}))
			require.Equal(t, 1, seen, "Attrs stops when fn returns false")
		}
		require.NoError(t, it.Close())
		after, stopped := it.Resume()
		if !stopped {
			break
		}
		q.After = after
	}
	require.Equal(t, querySKs, sks)
}
