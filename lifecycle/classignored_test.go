package lifecycle_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// TestClassIgnoredByTheStore walks five weeks of the default tiers on the
// DynamoDB-API server itself, without dynamofault.ControlPlane, which
// answers for the table class: DynamoDB Local and dynalite ignore classes
// (DynamoDB Local refuses an UpdateTable of the class alone: "Nothing to
// update"). Every cycle succeeds; the class change of the tables going
// cold is skipped with one warning, recorded in their entries and in the
// results, and not asked for again.
func TestClassIgnoredByTheStore(t *testing.T) {
	ep := os.Getenv(backends.EndpointEnv)
	if ep == "" {
		t.Skipf("set %s or run `make test` to start dynalite", backends.EndpointEnv)
	}
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ep)
	}
	ctx := context.Background()
	store, err := dynamostore.Open(ctx, dynamostore.Options{})
	require.NoError(t, err)
	id := "tci" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	f := family.DefaultSchema().Families[0]
	f.Prefix = id + "_ev_"
	// Every action done in one cycle: a chunk family's compaction would
	// wait for its fence to settle.
	f.Layout = family.LayoutRow
	meta := id + "_meta"
	t.Cleanup(func() {
		var names []string
		_ = store.ListTables(ctx, id, func(name string) bool {
			if !strings.HasPrefix(name, id+"_") {
				return false
			}
			names = append(names, name)
			return true
		})
		for _, n := range names {
			_ = backends.Drop(ctx, store, n)
		}
		store.Close()
	})

	var logs bytes.Buffer
	start := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(start.Add(-prebuild))
	r := reconciler(t, lifecycle.Options{Store: store, Families: []family.Family{f}, MetaTable: meta, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	skipped := 0
	for _, now := range yearSteps(start) {
		if !now.Before(start.AddDate(0, 0, 5*7)) {
			break
		}
		clk.Set(now)
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err, "reconcile at %s", now)
		for _, x := range res {
			require.Equal(t, lifecycle.Done, x.Outcome, "%s %s at %s: %s", x.Kind, x.Table, now, x)
			if x.Err != nil {
				require.Equal(t, "done: class infrequent_access not applied: the store ignores table classes", x.String())
				skipped++
			}
		}
	}
	require.NotZero(t, skipped, "tables went cold")
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
	require.Contains(t, logs.String(), "the store ignores table classes")

	entries, err := registry.New(store, meta).List(ctx, f.Name)
	require.NoError(t, err)
	cold := 0
	for _, e := range entries {
		if e.Tier != "cold" {
			require.Empty(t, e.ClassIgnored, e.Name)
			continue
		}
		cold++
		require.Equal(t, storage.ClassInfrequentAccess, e.ClassIgnored, e.Name)
		require.Equal(t, storage.ClassStandard, e.Capacity.Normal().Class, e.Name)
		info, err := store.DescribeTable(ctx, e.Name)
		require.NoError(t, err)
		require.Empty(t, registry.CapacityDrift(e, info), "the entry says what the store has")
	}
	require.Equal(t, skipped, cold, "each cold table's class is skipped once")

	// The plan asks for no class again.
	plan, err := r.Plan(ctx)
	require.NoError(t, err)
	for _, a := range plan {
		require.NotEqual(t, storage.ClassInfrequentAccess, a.Capacity.Class, "%s %s: %s", a.Kind, a.Table, a.Reason)
	}
}
