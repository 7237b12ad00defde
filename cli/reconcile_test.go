package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/lifecycle"
)

func TestReconcileGolden(t *testing.T) {
	// The seeded store at testNow (Thursday 2017-06-15) has the tables of
	// tables/all.txt: a late-data table, last week's (warm) and this
	// week's (hot).
	store, _ := seeded(t)
	before := mustRun(t, "", "tables", store, "--format", "json").stdout

	// Sunday 23:30: next week's table is due, and last week's turns cold
	// 15 minutes after midnight: not yet.
	sunday := []string{"--now", "2017-06-17T23:30:00Z"}
	dry := mustRun(t, "", append([]string{"reconcile", store, "--dry-run"}, sunday...)...)
	goldenFile(t, "reconcile/dry-run.txt", dry.stdout)
	dryJSON := mustRun(t, "", append([]string{"reconcile", store, "--dry-run", "--format", "json"}, sunday...)...)
	goldenFile(t, "reconcile/dry-run.json", dryJSON.stdout)
	require.Equal(t, before, mustRun(t, "", "tables", store, "--format", "json").stdout, "a dry run changes nothing")

	var reports []lifecycle.Report
	require.NoError(t, json.Unmarshal([]byte(dryJSON.stdout), &reports))
	require.NotEmpty(t, reports)
	for _, r := range reports {
		require.Equal(t, "dry-run", r.Result)
		require.NotEmpty(t, r.Action)
		require.NotEmpty(t, r.Table)
		require.NotEmpty(t, r.Reason)
		require.NotEmpty(t, r.Tier)
	}

	// Two weeks on: everything moves; applied, then nothing to do.
	later := []string{"--now", "2017-07-03T00:00:00Z", "--" + iKnowNowIsInTheFuture}
	done := mustRun(t, "", append([]string{"reconcile", store, "--format", "json"}, later...)...)
	goldenFile(t, "reconcile/applied.json", done.stdout)
	again := mustRun(t, "", append([]string{"reconcile", store}, later...)...)
	require.Equal(t, "nothing to do: every table is as the policy says\n", again.stdout)
}

// A --now later than the clock is a plan to look at, not to apply: it
// would create next year's table and dial down the one taking today's
// writes.
func TestReconcileRefusesAFutureNow(t *testing.T) {
	store, _ := seeded(t)
	before := mustRun(t, "", "tables", store, "--format", "json").stdout
	t.Setenv(EnvNow, "2017-06-17T23:30:00Z")
	r := run(t, "", "reconcile", store, "--now", "2027-01-15T00:00:00Z")
	require.Error(t, r.err)
	require.Contains(t, r.err.Error(), "later than the clock")
	require.Equal(t, ExitUsage, ExitCode(r.err))
	require.Equal(t, before, mustRun(t, "", "tables", store, "--format", "json").stdout, "nothing changed")

	mustRun(t, "", "reconcile", store, "--now", "2027-01-15T00:00:00Z", "--dry-run")
	mustRun(t, "", "reconcile", store, "--now", "2017-06-17T23:00:00Z", "--dry-run")
	require.Equal(t, before, mustRun(t, "", "tables", store, "--format", "json").stdout, "nothing changed")
}

func TestReconcileBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"reconcile", "--now", "yesterday"},
		{"reconcile", "--format", "yaml"},
	} {
		r := run(t, "", args...)
		require.Error(t, r.err, "%v", args)
	}
}
