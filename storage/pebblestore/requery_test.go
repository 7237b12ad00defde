package pebblestore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// drain reads an iterator's items to its end, and where it stopped.
func drain(t *testing.T, it storage.Iterator) (got []storage.Item, after string, stopped bool) {
	t.Helper()
	for it.Next() {
		got = append(got, it.Item())
	}
	require.NoError(t, it.Err())
	after, stopped = it.Resume()
	return got, after, stopped
}

// TestRequeryReadsAsQuery: one iterator requeried from query to query
// of a table (other partitions, ranges, directions, limits, resumes, a
// projection and a filter, an empty range) returns what a new Query
// returns, and where it stopped.
func TestRequeryReadsAsQuery(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	for _, pk := range []string{"a", "a#", "b", "c"} {
		require.NoError(t, s.BatchWrite(ctx, "tbl", items(pk, 20)))
	}
	five := &storage.Filter{Op: storage.FilterLt, Attr: "i", Value: json.Number("5")}
	queries := []storage.Query{
		{Table: "tbl", PK: "a"},
		{Table: "tbl", PK: "b", Low: "00000003", High: "00000011"},
		{Table: "tbl", PK: "a#", Desc: true, Limit: 4},
		{Table: "tbl", PK: "c", After: "00000007", Limit: 5},
		{Table: "tbl", PK: "c", After: "00000007", Desc: true},
		{Table: "tbl", PK: "b", Low: "00000012", High: "00000003"}, // no keys
		{Table: "tbl", PK: "none"},
		{Table: "tbl", PK: "a", Attrs: []string{"i"}, Filter: five},
		{Table: "tbl", PK: "b", Attrs: []string{}, Limit: 3},
		{Table: "tbl", PK: "a"},
	}
	it := s.Query(ctx, queries[0])
	defer it.Close()
	r, ok := it.(storage.Requerier)
	require.True(t, ok)
	for i, q := range queries {
		if i > 0 {
			require.True(t, r.Requery(ctx, q), "query %d", i)
		}
		got, after, stopped := drain(t, it)
		fresh := s.Query(ctx, q)
		want, wantAfter, wantStopped := drain(t, fresh)
		require.NoError(t, fresh.Close())
		require.Equal(t, want, got, "query %d: %+v", i, q)
		require.Equal(t, wantAfter, after, "query %d", i)
		require.Equal(t, wantStopped, stopped, "query %d", i)
	}
}

// TestRequeryReadsItsSnapshot: a requeried iterator reads the store as
// its first query found it, a new Query as it is; Requery refuses
// another table's query and a closed iterator, and an iterator made of
// an empty range has no Pebble iterator to move.
func TestRequeryReadsItsSnapshot(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	require.NoError(t, s.CreateTable(ctx, testSpec("other")))
	require.NoError(t, s.BatchWrite(ctx, "tbl", items("a", 3)))
	it := s.Query(ctx, storage.Query{Table: "tbl", PK: "a"})
	require.NoError(t, s.BatchWrite(ctx, "tbl", items("b", 3)))
	r := it.(storage.Requerier)
	require.True(t, r.Requery(ctx, storage.Query{Table: "tbl", PK: "b"}))
	got, _, _ := drain(t, it)
	require.Empty(t, got, "b was written after the snapshot")
	fresh := s.Query(ctx, storage.Query{Table: "tbl", PK: "b"})
	got, _, _ = drain(t, fresh)
	require.Len(t, got, 3)
	require.NoError(t, fresh.Close())

	require.False(t, r.Requery(ctx, storage.Query{Table: "other", PK: "a"}))
	require.True(t, r.Requery(ctx, storage.Query{Table: "tbl", PK: "a"}))
	got, _, _ = drain(t, it)
	require.Len(t, got, 3)
	require.NoError(t, it.Close())
	require.False(t, r.Requery(ctx, storage.Query{Table: "tbl", PK: "a"}), "closed")

	empty := s.Query(ctx, storage.Query{Table: "tbl", PK: "a", Low: "2", High: "1"})
	defer empty.Close()
	require.False(t, empty.(storage.Requerier).Requery(ctx, storage.Query{Table: "tbl", PK: "a"}))
}
