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
		{"Segments", s.testScanSegments},
		{"SegmentResume", s.testScanSegmentResume},
		{"SegmentInvalid", s.testScanSegmentInvalid},
	}
}

// testScanSegments scans a table in 1, 2, 3 and 7 segments, eventually
// consistent and not: together the segments of one Total return every
// item once, whatever the number of segments, and an empty table has
// empty segments.
func (s *suite) testScanSegments(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	empty := s.createTable(t, st)
	var want []storage.Item
	for _, pk := range []string{"a", "a#", "b", "é", "tenant#cars#car-17#0", "tenant#cars#car-9#3", "\x7f"} {
		want = append(want, numbered(pk, 30)...)
	}
	writeAll(t, st, name, want...)
	sortItems(want)
	for _, total := range []int{1, 2, 3, 7} {
		for _, eventual := range []bool{false, true} {
			var got []storage.Item
			for i := range total {
				seg := drain(t, st.ScanSegment(context.Background(), name, storage.Segment{Index: i, Total: total, Eventual: eventual}))
				got = append(got, seg...)
				require.Empty(t, drain(t, st.ScanSegment(context.Background(), empty, storage.Segment{Index: i, Total: total})))
			}
			sortItems(got)
			require.Equal(t, normaliseItems(want), normaliseItems(got), "%d segments, eventual %v", total, eventual)
		}
	}
}

// testScanSegmentResume stops each segment of a parallel scan at several
// items and resumes it after each: the rest is what the segment returned
// after it, in the same order.
func (s *suite) testScanSegmentResume(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	for _, pk := range []string{"a", "b", "c", "d", "e"} {
		writeAll(t, st, name, numbered(pk, 20)...)
	}
	for i := range 3 {
		seg := storage.Segment{Index: i, Total: 3}
		whole := drain(t, st.ScanSegment(context.Background(), name, seg))
		for _, stop := range []int{0, len(whole) / 2, len(whole) - 1} {
			if stop < 0 || stop >= len(whole) {
				continue
			}
			seg.After = whole[stop].Key()
			rest := drain(t, st.ScanSegment(context.Background(), name, seg))
			require.Equal(t, normaliseItems(whole[stop+1:]), normaliseItems(rest), "segment %d after item %d", i, stop)
		}
	}
}

// testScanSegmentInvalid refuses segments that name no part of a table.
func (s *suite) testScanSegmentInvalid(t *testing.T) {
	st := s.open(t)
	name := s.createTable(t, st)
	for _, seg := range []storage.Segment{{Index: 0, Total: 0}, {Index: 2, Total: 2}, {Index: -1, Total: 2}, {Total: storage.MaxSegments + 1}} {
		it := st.ScanSegment(context.Background(), name, seg)
		require.False(t, it.Next())
		require.ErrorIs(t, it.Err(), storage.ErrInvalid, "%+v", seg)
		it.Close() // may repeat the error
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
