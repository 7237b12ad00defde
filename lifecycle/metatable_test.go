package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/metatable"
)

// The meta table a cycle makes holds the registry of every table: it has
// deletion protection and point-in-time recovery.
func TestMetaTableProtected(t *testing.T) {
	clk := clock.NewManual(time.Date(2017, 1, 4, 12, 0, 0, 0, time.UTC))
	store, cfg, cp, _ := backends.OpenDynamo(t, clk.Now)
	r := reconciler(t, lifecycle.Options{Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clk})
	_, err := r.Reconcile(context.Background(), false)
	require.NoError(t, err)
	s := cp.Settings(cfg.MetaTable)
	require.True(t, s.DeletionProtection)
	require.Equal(t, metatable.PITRDays, s.PITRDays)
}
