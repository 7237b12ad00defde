package storagetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// durabilityTests check what survives closing the store.
func (s *suite) durabilityTests() []subtest {
	return []subtest{
		{"CloseTwice", s.testCloseTwice},
		{"Reopen", s.testReopen},
	}
}

func (s *suite) testCloseTwice(t *testing.T) {
	st := s.open(t)
	require.NoError(t, st.Close())
	require.NoError(t, st.Close())
}

func (s *suite) testReopen(t *testing.T) {
	if s.opts.Reopen == nil {
		t.Skip("the backend did not set Options.Reopen")
	}
	ctx := context.Background()
	st := s.open(t)
	sp := spec(s.tableName(t))
	sp.TTLAttribute = "ttl"
	require.NoError(t, st.CreateTable(ctx, sp))
	reopened := false
	t.Cleanup(func() {
		if !reopened { // the check failed early: st is still the first store
			_ = st.DeleteTable(context.Background(), sp.Name)
		}
	})
	items := numbered("p", 100)
	writeAll(t, st, sp.Name, items...)
	warm := storage.Capacity{Billing: storage.Provisioned, Read: 2, Write: 1}
	require.NoError(t, st.UpdateTable(ctx, sp.Name, storage.TableUpdate{Capacity: &warm, Tags: map[string]string{"tier": "warm"}}))
	gone := s.tableName(t)
	require.NoError(t, st.CreateTable(ctx, spec(gone)))
	writeAll(t, st, gone, numbered("p", 3)...)
	require.NoError(t, st.DeleteTable(ctx, gone))
	before, err := st.DescribeTable(ctx, sp.Name)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st = s.opts.Reopen(t, st)
	reopened = true
	deleteAtCleanup(t, st, sp.Name)
	after, err := st.DescribeTable(ctx, sp.Name)
	require.NoError(t, err)
	require.Equal(t, storage.StatusActive, after.Status)
	require.Equal(t, warm.Normal(), after.Capacity)
	require.Equal(t, sp.TTLAttribute, after.TTLAttribute)
	s.requireTags(t, map[string]string{"suite": "storagetest", "tier": "warm"}, after.Tags)
	require.True(t, before.CreatedAt.Equal(after.CreatedAt), "CreatedAt survives: %v, then %v", before.CreatedAt, after.CreatedAt)

	require.Equal(t, normaliseItems(items), normaliseItems(queryAll(t, st, storage.Query{Table: sp.Name, PK: "p"})))
	_, err = st.DescribeTable(ctx, gone)
	require.ErrorIs(t, err, storage.ErrTableNotFound, "a deleted table stays deleted")

	// The reopened store still writes.
	more := item("p", "more", map[string]any{"v": "x"})
	writeAll(t, st, sp.Name, more)
	requireItem(t, st, sp.Name, more)
}
