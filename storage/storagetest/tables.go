package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// tableTests check the table lifecycle: create, describe, list, update,
// delete, and errors on unknown tables.
func (s *suite) tableTests() []subtest {
	return []subtest{
		{"CreateThenDescribe", s.testCreateThenDescribe},
		{"CreateExisting", s.testCreateExisting},
		{"CreateConcurrently", s.testCreateConcurrently},
		{"DescribeUnknown", s.testDescribeUnknown},
		{"List", s.testList},
		{"ListManyTables", s.testListManyTables},
		{"Update", s.testUpdate},
		{"DeleteThenRecreate", s.testDeleteThenRecreate},
		{"UnknownTable", s.testUnknownTable},
	}
}

func (s *suite) testCreateThenDescribe(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	for _, tc := range []struct {
		name string
		spec storage.TableSpec
	}{
		{"provisioned with TTL", storage.TableSpec{
			Capacity:     storage.Capacity{Billing: storage.Provisioned, Read: 7, Write: 3},
			Tags:         map[string]string{"family": "events", "period": "2017-04-09", "empty": ""},
			TTLAttribute: "expires",
		}},
		{"on demand without tags", storage.TableSpec{
			Capacity: storage.Capacity{Billing: storage.OnDemand},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.spec
			sp.Name = s.tableName(t)
			s.create(t, st, sp)

			info, err := st.DescribeTable(ctx, sp.Name)
			require.NoError(t, err)
			require.Equal(t, sp.Name, info.Name)
			require.Equal(t, storage.StatusActive, info.Status)
			require.Equal(t, sp.Capacity.Normal(), info.Capacity, "the capacity, as stores report it (Capacity.Normal)")
			require.Equal(t, sp.TTLAttribute, info.TTLAttribute)
			s.requireTags(t, sp.Tags, info.Tags)
			require.False(t, info.CreatedAt.IsZero(), "CreatedAt is set")
			require.GreaterOrEqual(t, info.ItemCount, int64(-1))
			require.GreaterOrEqual(t, info.SizeBytes, int64(-1))
		})
	}
}

func (s *suite) testCreateExisting(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	name := s.createTable(t, st)
	first := item("p", "before", map[string]any{"n": num("1")})
	writeAll(t, st, name, first)

	other := spec(name)
	other.Capacity = storage.Capacity{Billing: storage.Provisioned, Read: 9, Write: 9}
	err := st.CreateTable(ctx, other)
	require.ErrorIs(t, err, storage.ErrTableExists)

	// The table is untouched and still serves reads and writes.
	info, err := st.DescribeTable(ctx, name)
	require.NoError(t, err)
	require.Equal(t, storage.StatusActive, info.Status)
	require.Equal(t, spec(name).Capacity.Normal(), info.Capacity)
	requireItem(t, st, name, first)
	second := item("p", "after", map[string]any{"s": "x"})
	writeAll(t, st, name, second)
	require.Equal(t, []storage.Item{second, first}, normaliseItems(queryAll(t, st, storage.Query{Table: name, PK: "p"})),
		"both items, in sort-key order")
}

func (s *suite) testCreateConcurrently(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	prefix := s.prefix(t)
	name := prefix + "t"
	const callers = 8
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { errs[i] = st.CreateTable(ctx, spec(name)) })
	}
	wg.Wait()
	deleteAtCleanup(t, st, name)

	created := 0
	for i, err := range errs {
		if err == nil {
			created++
			continue
		}
		require.ErrorIs(t, err, storage.ErrTableExists, "caller %d", i)
	}
	require.Equal(t, 1, created, "exactly one caller creates the table")
	require.Equal(t, []string{name}, listAfter(t, st, prefix, prefix), "exactly one table")
	info, err := st.DescribeTable(ctx, name)
	require.NoError(t, err)
	require.Equal(t, storage.StatusActive, info.Status)
	it := item("p", "s", nil)
	writeAll(t, st, name, it)
	requireItem(t, st, name, it)
}

func (s *suite) testDescribeUnknown(t *testing.T) {
	st := s.open(t)
	_, err := st.DescribeTable(context.Background(), s.tableName(t))
	require.ErrorIs(t, err, storage.ErrTableNotFound)
}

func (s *suite) testList(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	prefix := s.prefix(t)
	// Created out of order; "b" and "b-1" share a prefix, and '-' sorts
	// before '.', digits, letters and '_'.
	tags := []string{"c", "b-1", "a", "b", "B", "b_", "b.1"}
	want := []string{"B", "a", "b", "b-1", "b.1", "b_", "c"}
	if s.opts.CaseInsensitiveNames {
		tags, want = slices.DeleteFunc(tags, func(n string) bool { return n == "B" }), want[1:]
	}
	for _, tag := range tags {
		s.create(t, st, spec(prefix+tag))
	}
	for i := range want {
		want[i] = prefix + want[i]
	}

	require.Equal(t, want, listAfter(t, st, prefix, prefix), "ascending, after the prefix")
	after := func(name string) []string {
		return slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n <= name })
	}
	require.Equal(t, after(prefix+"b"), listAfter(t, st, prefix, prefix+"b"), "strictly after an existing name")
	require.Len(t, after(prefix+"b"), 4)
	require.Equal(t, after(prefix+"az"), listAfter(t, st, prefix, prefix+"az"), "after a name that does not exist")

	var calls []string
	require.NoError(t, st.ListTables(ctx, prefix, func(name string) bool {
		calls = append(calls, name)
		return len(calls) < 2
	}))
	require.Equal(t, want[:2], calls, "stops as soon as fn returns false")

	// The whole listing is strictly ascending and holds every table.
	var all []string
	require.NoError(t, st.ListTables(ctx, "", func(name string) bool {
		all = append(all, name)
		return true
	}))
	for i := 1; i < len(all); i++ {
		require.Less(t, all[i-1], all[i], "listing is strictly ascending")
	}
	for _, name := range want {
		require.Contains(t, all, name)
	}
}

func (s *suite) testListManyTables(t *testing.T) {
	if !s.opts.ManyTables {
		t.Skip("the backend did not set Options.ManyTables: creating tables is slow on it")
	}
	if testing.Short() {
		t.Skip("creates more than 100 tables; skipped with -short")
	}
	st := s.open(t)
	prefix := s.prefix(t)
	const n = 105 // DynamoDB lists at most 100 names a page.
	var want []string
	for i := range n {
		name := fmt.Sprintf("%s%03d", prefix, n-1-i) // created in descending order
		s.create(t, st, spec(name))
		want = append([]string{name}, want...)
	}
	require.Equal(t, want, listAfter(t, st, prefix, prefix))
	require.Equal(t, want[51:], listAfter(t, st, prefix, want[50]))
	require.Equal(t, want[101:], listAfter(t, st, prefix, want[100]), "across a page boundary")
}

func (s *suite) testUpdate(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	name := s.createTable(t, st)
	describe := func() storage.TableInfo {
		t.Helper()
		info, err := st.DescribeTable(ctx, name)
		require.NoError(t, err)
		require.Equal(t, storage.StatusActive, info.Status)
		return info
	}

	require.NoError(t, st.UpdateTable(ctx, name, storage.TableUpdate{}), "an empty update")
	require.Equal(t, spec(name).Capacity.Normal(), describe().Capacity)

	warm := storage.Capacity{Billing: storage.Provisioned, Read: 10, Write: 2}
	require.NoError(t, st.UpdateTable(ctx, name, storage.TableUpdate{Capacity: &warm}))
	info := describe()
	require.Equal(t, warm.Normal(), info.Capacity)
	s.requireTags(t, spec(name).Tags, info.Tags)

	require.NoError(t, st.UpdateTable(ctx, name, storage.TableUpdate{
		Tags: map[string]string{"suite": "replaced", "tier": "warm"},
	}))
	info = describe()
	s.requireTags(t, map[string]string{"suite": "replaced", "tier": "warm"}, info.Tags)
	require.Equal(t, warm.Normal(), info.Capacity, "a tag update leaves capacity alone")

	onDemand := storage.Capacity{Billing: storage.OnDemand}
	require.NoError(t, st.UpdateTable(ctx, name, storage.TableUpdate{Capacity: &onDemand}))
	require.Equal(t, storage.OnDemand, describe().Capacity.Billing)

	require.Empty(t, describe().TTLAttribute, "created without TTL")
	for range 2 { // enabling TTL twice is harmless
		require.NoError(t, st.UpdateTable(ctx, name, storage.TableUpdate{TTLAttribute: "expires"}))
		info = describe()
		require.Equal(t, "expires", info.TTLAttribute)
		require.Equal(t, storage.OnDemand, info.Capacity.Billing, "a TTL update leaves capacity alone")
		s.requireTags(t, map[string]string{"suite": "replaced", "tier": "warm"}, info.Tags)
	}

	// The table still works after its updates.
	it := item("p", "s", map[string]any{"v": "x"})
	writeAll(t, st, name, it)
	requireItem(t, st, name, it)
}

func (s *suite) testDeleteThenRecreate(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	prefix := s.prefix(t)
	name := prefix + "t"
	s.create(t, st, spec(name))
	writeAll(t, st, name, numbered("p", 30)...)
	writeAll(t, st, name, numbered("q", 5)...)

	require.NoError(t, st.DeleteTable(ctx, name))
	_, err := st.DescribeTable(ctx, name)
	require.ErrorIs(t, err, storage.ErrTableNotFound)
	_, err = st.GetItem(ctx, name, "p", key(0))
	require.ErrorIs(t, err, storage.ErrTableNotFound)
	require.Empty(t, listAfter(t, st, prefix, prefix), "gone from the listing")
	require.ErrorIs(t, st.DeleteTable(ctx, name), storage.ErrTableNotFound, "deleting twice")

	s.create(t, st, spec(name))
	require.Empty(t, queryAll(t, st, storage.Query{Table: name, PK: "p"}), "the new table is empty")
	require.Empty(t, scanAll(t, st, name), "the new table is empty")
	_, err = st.GetItem(ctx, name, "p", key(0))
	require.ErrorIs(t, err, storage.ErrItemNotFound)
}

func (s *suite) testUnknownTable(t *testing.T) {
	ctx := context.Background()
	st := s.open(t)
	name := s.tableName(t)

	items := []storage.Item{item("p", "a", nil), item("p", "b", nil)}
	err := st.BatchWrite(ctx, name, items)
	require.ErrorIs(t, err, storage.ErrTableNotFound, "BatchWrite")
	var we *storage.BatchWriteError
	require.ErrorAs(t, err, &we)
	require.Equal(t, []int{0, 1}, we.Unwritten)

	_, err = st.GetItem(ctx, name, "p", "a")
	require.ErrorIs(t, err, storage.ErrTableNotFound, "GetItem")

	it := st.Query(ctx, storage.Query{Table: name, PK: "p"})
	require.False(t, it.Next(), "Query")
	require.ErrorIs(t, it.Err(), storage.ErrTableNotFound, "Query")
	require.ErrorIs(t, it.Close(), storage.ErrTableNotFound, "Query: Close returns Err")

	it = st.Scan(ctx, name)
	require.False(t, it.Next(), "Scan")
	require.ErrorIs(t, it.Err(), storage.ErrTableNotFound, "Scan")
	require.ErrorIs(t, it.Close(), storage.ErrTableNotFound, "Scan: Close returns Err")

	capacity := storage.Capacity{Billing: storage.Provisioned, Read: 1, Write: 1}
	require.ErrorIs(t, st.UpdateTable(ctx, name, storage.TableUpdate{Capacity: &capacity}), storage.ErrTableNotFound, "UpdateTable")
	require.ErrorIs(t, st.DeleteTable(ctx, name), storage.ErrTableNotFound, "DeleteTable")
	_, err = st.DescribeTable(ctx, name)
	require.ErrorIs(t, err, storage.ErrTableNotFound, "DescribeTable")
}

// listAfter returns the names ListTables gives after after that start
// with prefix; it stops the listing at the first name past the prefix.
func listAfter(t *testing.T, st storage.Store, prefix, after string) []string {
	t.Helper()
	var names []string
	require.NoError(t, st.ListTables(context.Background(), after, func(name string) bool {
		if !strings.HasPrefix(name, prefix) {
			return false
		}
		names = append(names, name)
		return true
	}))
	return names
}

// requireTags compares tag sets, treating nil and empty as equal; a store
// without tags must report none.
func (s *suite) requireTags(t *testing.T, want, got map[string]string) {
	t.Helper()
	if s.opts.NoTags {
		want = nil
	}
	if len(want) == 0 && len(got) == 0 {
		return
	}
	require.Equal(t, want, got, "tags")
}
