package bench

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// TestMeterWorkloads checks the requests the meter counts for small
// fixed workloads, which the write paths fix exactly: one writer per
// series never collides, so no write path reads.
func TestMeterWorkloads(t *testing.T) {
	gen := newGenerator(start, 0)
	per := workloads[1].perMs
	for _, tc := range []struct {
		config   layoutConfig
		workload workload
		// requests per millisecond-worth of events
		requests int
	}{
		{layoutConfigs[0], workloads[0], 1},
		{layoutConfigs[1], workloads[0], 1},   // create succeeds
		{layoutConfigs[2], workloads[0], 2},   // append fails on a missing item, create
		{layoutConfigs[3], workloads[0], 1},   // auto: create first
		{layoutConfigs[0], workloads[1], per}, // one batch per event
		{layoutConfigs[1], workloads[1], 1 + 2*(per-1)},
		{layoutConfigs[2], workloads[1], 2 + (per - 1)},
		{layoutConfigs[3], workloads[1], 1 + (per - 1)}, // create, then appends
		{layoutConfigs[0], workloads[2], 1},             // one batch per millisecond
		{layoutConfigs[1], workloads[2], 1},             // one create per millisecond
		{layoutConfigs[2], workloads[2], 2},             // append fails, create
		{layoutConfigs[3], workloads[2], 1},             // auto: a new millisecond, create first
	} {
		t.Run(tc.config.name+" "+tc.workload.name, func(t *testing.T) {
			const writers, events = 2, 40
			c, err := meterWorkload(context.Background(), gen, tc.config, tc.workload, writers, events)
			require.NoError(t, err)
			require.EqualValues(t, events, c.Events)
			ms := events / tc.workload.perMs
			require.EqualValues(t, ms*tc.requests, c.Requests)
			require.Zero(t, c.ReadUnits, "no write path should read without contention")
			// Every request writes at least one unit.
			require.GreaterOrEqual(t, c.WriteUnits, c.Requests)
			if tc.workload.perMs == 1 {
				// 180-byte rows, and map items of one event, are under 1 KB.
				require.Equal(t, c.Requests, c.WriteUnits)
			}
		})
	}
}

// TestMeterWorkloadsGrowingItems checks that appends are charged by the
// whole item they rewrite: ten 180-byte events make a map item of more
// than 1 KB, so the later appends of a millisecond cost more than one
// unit each.
func TestMeterWorkloadsGrowingItems(t *testing.T) {
	gen := newGenerator(start, 0)
	row, err := meterWorkload(context.Background(), gen, layoutConfigs[0], workloads[1], 1, 20)
	require.NoError(t, err)
	auto, err := meterWorkload(context.Background(), gen, layoutConfigs[3], workloads[1], 1, 20)
	require.NoError(t, err)
	require.EqualValues(t, 20, row.WriteUnits)
	require.Greater(t, auto.WriteUnits, auto.Requests)
	require.Greater(t, auto.WriteUnits, row.WriteUnits)

	// Ten events in one call make one item, written once: fewer units
	// than ten rows.
	batched, err := meterWorkload(context.Background(), gen, layoutConfigs[3], workloads[2], 1, 20)
	require.NoError(t, err)
	require.Less(t, batched.WriteUnits, row.WriteUnits)
}

// TestMeterRules checks each charging rule on one item.
func TestMeterRules(t *testing.T) {
	ctx := context.Background()
	inner, err := pebblestore.Open("rules", pebblestore.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer inner.Close()
	m := &meter{Store: inner}
	require.NoError(t, m.CreateTable(ctx, storage.TableSpec{Name: "tbl"}))
	check := func(requests, wcu, rcu, failed int64) {
		t.Helper()
		c := m.counts()
		require.Equal(t, meterCounts{Requests: requests, WriteUnits: wcu, ReadUnits: rcu, FailedConditions: failed}, c)
		m.reset()
	}

	// A read of a missing item costs one unit.
	_, err = m.GetItem(ctx, "tbl", "p", "s")
	require.ErrorIs(t, err, storage.ErrItemNotFound)
	check(1, 0, 1, 0)

	// A failed condition on a missing item costs one write unit, however
	// large the item it tried to make.
	big := strings.Repeat("x", 3000)
	err = m.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s", Conds: []storage.Cond{storage.Exists(storage.PKAttr)}, Actions: []storage.Action{storage.Set("a", big)}})
	require.ErrorIs(t, err, storage.ErrConditionFailed)
	check(1, 1, 0, 1)

	// A create of a 3 KB item costs 3 units.
	create := storage.Update{Table: "tbl", PK: "p", SK: "s", Conds: []storage.Cond{storage.NotExists(storage.PKAttr)}, Actions: []storage.Action{storage.Set("a", big)}}
	require.NoError(t, m.Update(ctx, create))
	check(1, 3, 0, 0)

	// A failed create of an existing item is charged by the larger of the
	// item and the one it would have made.
	bigger := create
	bigger.Actions = []storage.Action{storage.Set("a", big), storage.Set("b", big)}
	require.ErrorIs(t, m.Update(ctx, bigger), storage.ErrConditionFailed)
	check(1, 6, 0, 1)

	// An update that shrinks the item is charged by its size before.
	shrink := storage.Update{Table: "tbl", PK: "p", SK: "s", Actions: []storage.Action{storage.Set("a", "y")}}
	require.NoError(t, m.Update(ctx, shrink))
	check(1, 3, 0, 0)

	// A failed append is charged by the item as it would have grown.
	grow := storage.Update{Table: "tbl", PK: "p", SK: "s",
		Conds:   []storage.Cond{storage.NotExists("a")},
		Actions: []storage.Action{storage.Append("l", []any{big, big}), storage.Add("n", json.Number("5"))}}
	require.ErrorIs(t, m.Update(ctx, grow), storage.ErrConditionFailed)
	check(1, 6, 0, 1)

	// A read of a 5 KB item costs two units.
	require.NoError(t, m.Update(ctx, storage.Update{Table: "tbl", PK: "p", SK: "s", Actions: []storage.Action{storage.Set("a", big), storage.Set("b", big[:2000])}}))
	m.reset()
	_, err = m.GetItem(ctx, "tbl", "p", "s")
	require.NoError(t, err)
	check(1, 0, 2, 0)

	// A batch of 30 small items is two requests, one unit each.
	items := make([]storage.Item, 30)
	for i := range items {
		items[i] = storage.Item{PK: "q", SK: strings.Repeat("k", i+1)}
	}
	require.NoError(t, m.BatchWrite(ctx, "tbl", items))
	check(2, 30, 0, 0)

	// Other errors are a request without units.
	err = m.Update(ctx, storage.Update{Table: "missing", PK: "p", SK: "s", Actions: []storage.Action{storage.Set("a", "b")}})
	require.Error(t, err)
	require.False(t, errors.Is(err, storage.ErrConditionFailed))
	check(1, 0, 0, 0)
}

// TestApplyActions checks the item a failed update tried to make.
func TestApplyActions(t *testing.T) {
	it := storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"m": map[string]any{"x": "1"}, "l": []any{"a"}, "n": json.Number("7")}}
	got := applyActions(it, []storage.Action{
		storage.SetKey("m", "y", "2"),
		storage.Append("l", []any{"b"}),
		storage.Add("n", json.Number("5")),
		storage.Add("z", json.Number("1.5")),
		storage.Set("s", "v"),
	})
	require.Equal(t, map[string]any{
		"m": map[string]any{"x": "1", "y": "2"},
		"l": []any{"a", "b"},
		"n": json.Number("12"),
		"z": json.Number("1.5"),
		"s": "v",
	}, got.Attrs)
	// The item itself is unchanged.
	require.Equal(t, map[string]any{"m": map[string]any{"x": "1"}, "l": []any{"a"}, "n": json.Number("7")}, it.Attrs)
}
