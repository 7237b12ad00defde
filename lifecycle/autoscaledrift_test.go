package lifecycle_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// An auto scaled table whose units Application Auto Scaling moved,
// between the tier's floor and peak, is left where it is by a day of
// sweeps; moved above the peak, it is drift, found and put back.
func TestAutoScalingMovesAreNotDrift(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		f.Tiers = append([]family.Tier(nil), f.Tiers...)
		f.Tiers[0].Capacity.MaxRead = f.Tiers[0].Capacity.Read * 10
		f.Tiers[0].Capacity.MaxWrite = f.Tiers[0].Capacity.Write * 10
		clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{Store: store, Families: []family.Family{f}, Clock: clk})
		_, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		reg := registry.New(store, metaFor(f))
		entries, err := reg.List(ctx, f.Name)
		require.NoError(t, err)
		var hot registry.Entry
		for _, e := range entries {
			if e.Tier == f.Tiers[0].Name {
				hot = e
			}
		}
		require.NotEmpty(t, hot.Name)
		require.Positive(t, hot.Capacity.MaxWrite, "the entry records the peak")

		sweepDay := func() []lifecycle.Result {
			var found []lifecycle.Result
			for cycle := 0; cycle < 288 && found == nil; cycle++ {
				clk.Advance(5 * time.Minute)
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err)
				for _, x := range res {
					if x.Table == hot.Name && strings.Contains(x.Reason, "capacity changed outside timetable") {
						found = append(found, x)
					}
				}
			}
			return found
		}
		// Scaled up within the peak, as target tracking does.
		moved := storage.Capacity{Billing: storage.Provisioned, Read: hot.Capacity.Read * 3, Write: hot.Capacity.MaxWrite}
		require.NoError(t, store.UpdateTable(ctx, hot.Name, storage.TableUpdate{Capacity: &moved}))
		require.Empty(t, sweepDay(), "auto scaling's move is no drift")
		info, err := store.DescribeTable(ctx, hot.Name)
		require.NoError(t, err)
		require.Equal(t, moved.Write, info.Capacity.Write, "left where auto scaling put it")

		// Above the peak: someone else's change.
		over := storage.Capacity{Billing: storage.Provisioned, Read: hot.Capacity.Read, Write: hot.Capacity.MaxWrite + 1}
		require.NoError(t, store.UpdateTable(ctx, hot.Name, storage.TableUpdate{Capacity: &over}))
		found := sweepDay()
		require.Len(t, found, 1, "found within a day of cycles")
		require.Equal(t, lifecycle.UpdateCapacity, found[0].Kind)
	})
}
