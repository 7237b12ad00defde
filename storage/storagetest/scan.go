package storagetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// scanTests check Scan.
func (s *suite) scanTests() []subtest {
	return []subtest{
		{"EveryItemOnce", s.testScanEveryItemOnce},
		{"Empty", s.testScanEmpty},
		{"Resume", s.testScanResume},
	}
}

// testScanResume stops a scan at several items and resumes after each
// with ScanAfter: the items after it are those the whole scan returned
// after it, in the same order.
func (s *suite) testScanResume(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	var items []storage.Item
	for _, pk := range []string{"a", "a#", "b", "é"} {
		items = append(items, numbered(pk, 40)...)
	}
	writeAll(t, st, name, items...)
	whole := scanAll(t, st, name)
	require.Len(t, whole, len(items))
	for _, stop := range []int{0, 1, 39, 40, 97, len(whole) - 2, len(whole) - 1} {
		after := whole[stop].Key()
		rest := drain(t, st.ScanAfter(context.Background(), name, after))
		require.Equal(t, normaliseItems(whole[stop+1:]), normaliseItems(rest), "after item %d", stop)
	}
}

func (s *suite) testScanEveryItemOnce(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	other := s.createTable(t, st)

	var want []storage.Item
	for _, pk := range []string{"a", "a#", "b", "é"} {
		want = append(want, numbered(pk, 60)...)
	}
	want = append(want, item("lone", "x", nil))
	writeAll(t, st, name, want...)
	writeAll(t, st, other, numbered("a", 10)...) // must not show up

	got := scanAll(t, st, name)
	seen := make(map[string]int, len(got))
	for _, it := range got {
		seen[fmt.Sprintf("%q/%q", it.PK, it.SK)]++
	}
	for k, n := range seen {
		require.Equal(t, 1, n, "item %s seen once", k)
	}
	sortItems(got)
	sortItems(want)
	require.Equal(t, normaliseItems(want), normaliseItems(got))
}

func (s *suite) testScanEmpty(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	require.Empty(t, scanAll(t, st, name))
}
