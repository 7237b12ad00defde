package lifecycle_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
)

// TestLastCycle checks that a cycle's time, outcome and results are kept,
// a failed one's error too, and that a dry run is not a cycle.
func TestLastCycle(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	clk := clock.NewManual(at("2017-04-12T10:00:00Z"))
	r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: quotaStore{store}, Families: cfg.Families, Clock: clk, Registerer: prometheus.NewRegistry()})
	_, ok := r.LastCycle()
	require.False(t, ok, "no cycle yet")

	plan, err := r.DryRun(context.Background())
	require.NoError(t, err)
	require.Len(t, plan, 1)
	require.Equal(t, lifecycle.DryRun, plan[0].Outcome)
	_, ok = r.LastCycle()
	require.False(t, ok, "a dry run is not a cycle")

	_, err = r.Reconcile(context.Background(), false)
	require.ErrorIs(t, err, lifecycle.ErrActionsFailed)
	c, ok := r.LastCycle()
	require.True(t, ok)
	require.Equal(t, lifecycle.CycleFailed, c.Outcome)
	require.Equal(t, clk.Now(), c.Start)
	require.ErrorIs(t, c.Err, lifecycle.ErrActionsFailed)
	rep := c.Report()
	require.Len(t, rep.Actions, 1)
	require.Equal(t, "create", rep.Actions[0].Action)
	require.Contains(t, rep.Error, "actions failed")

	r = reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, Clock: clk, Registerer: prometheus.NewRegistry()})
	_, err = r.Reconcile(context.Background(), false)
	require.NoError(t, err)
	c, ok = r.LastCycle()
	require.True(t, ok)
	require.Equal(t, lifecycle.CycleOK, c.Outcome)
	require.Len(t, c.Results, 1)
	require.Equal(t, lifecycle.Done, c.Results[0].Outcome)
}
