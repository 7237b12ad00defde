package lifecycle_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
)

func TestHandleLambda(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		oldTables(t, store, f)
		clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk})

		handle := func(in string) (lifecycle.LambdaResponse, error) {
			var ev lifecycle.LambdaEvent
			require.NoError(t, json.Unmarshal([]byte(in), &ev))
			return lifecycle.HandleLambda(ctx, r, ev)
		}
		_, err := handle(`{"Operation": "drop_all"}`)
		require.ErrorIs(t, err, lifecycle.ErrUnknownOperation)

		// The tables were made before the registry: every job registers
		// them first.
		registers := toRegister(t, store, f)
		res, err := handle(`{"Operation": "resize_old", "DryRun": true}`)
		require.NoError(t, err)
		require.Len(t, res.Actions, 3+registers)
		for _, a := range res.Actions {
			require.Contains(t, []string{"register", "update_capacity"}, a.Action)
			require.Equal(t, "dry-run", a.Result)
		}

		res, err = handle(`{"Operation": "create_new"}`)
		require.NoError(t, err)
		require.Equal(t, "create_new", res.Operation)
		require.Len(t, res.Actions, 1+registers)
		res.Actions = slices.DeleteFunc(res.Actions, func(a lifecycle.Report) bool { return a.Action == "register" })
		require.Equal(t, "create", res.Actions[0].Action)
		require.Equal(t, "done", res.Actions[0].Result)

		res, err = handle(`{"Operation": "resize_old"}`)
		require.NoError(t, err)
		require.Len(t, res.Actions, 3)
		for _, a := range res.Actions {
			require.Equal(t, "update_capacity", a.Action)
			require.Equal(t, "done", a.Result)
		}

		// A plain scheduled event reconciles; nothing is left to do.
		res, err = handle(`{"version": "0", "detail-type": "Scheduled Event"}`)
		require.NoError(t, err)
		require.Equal(t, "reconcile", res.Operation)
		require.Empty(t, res.Actions)
		out, err := json.Marshal(res)
		require.NoError(t, err)
		require.JSONEq(t, `{"operation": "reconcile", "actions": []}`, string(out))
	})
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := lifecycle.ConfigFromEnv(env(nil))
	require.NoError(t, err)
	require.Equal(t, config.Default().Families, c.Families)

	yaml := "families:\n  - name: events\n    prefix: prod_events_\n    retention: 90d\n"
	c, err = lifecycle.ConfigFromEnv(env(map[string]string{lifecycle.EnvConfigYAML: yaml}))
	require.NoError(t, err)
	require.Equal(t, "prod_events_", c.Families[0].Prefix)

	path := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	c, err = lifecycle.ConfigFromEnv(env(map[string]string{lifecycle.EnvConfig: path}))
	require.NoError(t, err)
	require.Equal(t, "prod_events_", c.Families[0].Prefix)

	c, err = lifecycle.ConfigFromEnv(env(map[string]string{lifecycle.EnvConfig: path, lifecycle.EnvMetaTable: "ops_meta"}))
	require.NoError(t, err)
	require.Equal(t, "ops_meta", c.MetaTable, "the template's MetaTable reaches the function")
	_, err = lifecycle.ConfigFromEnv(env(map[string]string{lifecycle.EnvConfig: path, lifecycle.EnvConfigYAML: yaml}))
	require.ErrorIs(t, err, config.ErrInvalid)
	_, err = lifecycle.ConfigFromEnv(env(map[string]string{lifecycle.EnvConfigYAML: "families: [{name: x, period: fortnight}]"}))
	require.ErrorIs(t, err, config.ErrInvalid)
}

// An invocation that finds the lease held by another succeeds, saying it
// skipped; a cycle gives the lease up when it ends.
func TestHandleLambdaLeaseHeld(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
	r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, Clock: clk, Leaser: fixedLeaser{held: false}})
	res, err := lifecycle.HandleLambda(context.Background(), r, lifecycle.LambdaEvent{Operation: "reconcile"})
	require.NoError(t, err)
	require.Contains(t, res.Skipped, "lease")
	require.Empty(t, res.Actions)

	released := &releasingLeaser{}
	r = reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, Clock: clk, Leaser: released})
	_, err = lifecycle.HandleLambda(context.Background(), r, lifecycle.LambdaEvent{Operation: "reconcile"})
	require.NoError(t, err)
	require.Equal(t, 1, released.releases)
}

type releasingLeaser struct{ releases int }

func (l *releasingLeaser) Acquire(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}

func (l *releasingLeaser) Release(context.Context, string, string) error {
	l.releases++
	return nil
}
