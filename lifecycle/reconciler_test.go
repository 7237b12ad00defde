package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// each runs a test on every backend, with the backend's store and its
// default family (a prefix of the test's own) on the blog's provisioned
// tiers, whose every tier change is a capacity change, so that the tests
// see the same actions whether a table's tier comes from its tags or,
// on DynamoDB Local, which keeps no tags, from its name.
func each(t *testing.T, test func(t *testing.T, store storage.Store, f family.Family)) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			store, cfg := b.Open(t)
			metaTables.Store(cfg.Families[0].Prefix, cfg.MetaTable)
			f := cfg.Families[0]
			f.Billing, f.Tiers = storage.Provisioned, family.BlogTiers()
			test(t, store, f)
		})
	}
}

// snapshot describes every table of the store with the prefix.
func snapshot(t *testing.T, store storage.Store, prefix string) map[string]storage.TableInfo {
	t.Helper()
	ctx := context.Background()
	out := map[string]storage.TableInfo{}
	var names []string
	require.NoError(t, store.ListTables(ctx, prefix, func(name string) bool {
		if len(name) < len(prefix) || name[:len(prefix)] != prefix {
			return false
		}
		names = append(names, name)
		return true
	}))
	for _, n := range names {
		info, err := store.DescribeTable(ctx, n)
		require.NoError(t, err)
		info.CreatedAt, info.ItemCount, info.SizeBytes = time.Time{}, 0, 0
		out[n] = info
	}
	return out
}

// registryTiers returns the tier the registry records of each live table
// of a family: the tier as last applied.
func registryTiers(t *testing.T, store storage.Store, f family.Family) map[string]string {
	t.Helper()
	entries, err := registry.New(store, metaFor(f)).List(context.Background(), f.Name)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		if e.State.Live() {
			out[e.Name] = e.Tier
		}
	}
	return out
}

// metaTables holds the meta table of each test's backend, by the test's
// family prefix, so that the reconcilers of a test share the registry of
// its engine and not another test's.
var metaTables sync.Map

func reconciler(t *testing.T, o lifecycle.Options) *lifecycle.Reconciler {
	t.Helper()
	if m, ok := metaTables.Load(o.Families[0].Prefix); ok && o.MetaTable == "" {
		o.MetaTable = m.(string)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := lifecycle.New(o)
	require.NoError(t, err)
	return r
}

func kindsAndTables(rs []lifecycle.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %s %s", r.Kind, r.Table, r.Outcome))
	}
	return out
}

// ownSpec is the specification of a table this deployment made and whose
// registry entry was lost: tagged with its meta table.
func ownSpec(f family.Family, ref naming.Ref, tier family.Tier) storage.TableSpec {
	spec := f.Spec(ref, tier)
	spec.Tags[family.TagMeta] = metaFor(f)
	return spec
}

// toRegister returns how many of oldTables' three tables a cycle
// registers: none where the operator adopted them already (an endpoint
// without tags).
func toRegister(t *testing.T, store storage.Store, f family.Family) int {
	entries, err := registry.New(store, metaFor(f)).List(context.Background(), f.Name)
	if errors.Is(err, storage.ErrTableNotFound) {
		return 3
	}
	require.NoError(t, err)
	return 3 - len(entries)
}

// oldTables makes a store as a server stopped for weeks leaves it: three
// weekly tables all hot, and tables that are not the family's.
func oldTables(t *testing.T, store storage.Store, f family.Family) (foreign []string) {
	ctx := context.Background()
	for _, day := range []string{"2017-04-03T00:00:00Z", "2017-04-10T00:00:00Z", "2017-04-17T00:00:00Z"} {
		ref := f.TableFor(at(day), at(day))
		spec := ownSpec(f, ref, f.Tiers[0])
		require.NoError(t, store.CreateTable(ctx, spec))
		if info, err := store.DescribeTable(ctx, spec.Name); err == nil && info.Tags[family.TagMeta] == "" {
			// An endpoint without tags (DynamoDB Local) cannot prove the
			// table this deployment's: the operator adopts it, as
			// `timetable tables adopt` does.
			if err := store.CreateTable(ctx, storage.TableSpec{Name: metaFor(f), Capacity: storage.Capacity{Billing: storage.OnDemand}}); err != nil {
				require.ErrorIs(t, err, storage.ErrTableExists)
			}
			_, err := registry.New(store, metaFor(f)).Adopt(ctx, store, []family.Family{f}, spec.Name, false, at(day))
			require.NoError(t, err)
		}
	}
	foreign = []string{f.Prefix + "1491696000000_1492300799000_04_2017", f.Prefix + "notes"}
	for _, name := range foreign {
		require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: name, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000}}))
	}
	return foreign
}

func TestReconcileTwiceChangesNothing(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		f.Retention = 14 * 24 * time.Hour
		f.TTL = 90 * 24 * time.Hour
		foreign := oldTables(t, store, f)
		before := snapshot(t, store, f.Prefix)
		clk := clock.NewManual(at("2017-05-15T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk})

		// A dry run plans and changes nothing.
		dry, err := r.Reconcile(ctx, true)
		require.NoError(t, err)
		require.NotEmpty(t, dry)
		for _, res := range dry {
			require.Equal(t, lifecycle.DryRun, res.Outcome)
		}
		require.Equal(t, before, snapshot(t, store, f.Prefix), "a dry run changes nothing")

		first, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Equal(t, kindsAndTables(dry), func() []string {
			var out []string
			for _, s := range kindsAndTables(first) {
				out = append(out, s[:len(s)-len("done")]+"dry-run")
			}
			return out
		}(), "the dry run showed what the cycle did")
		// April's tables go 14 days after April ends, on May 15 at
		// midnight; this week's is made.
		after := snapshot(t, store, f.Prefix)
		tiers := registryTiers(t, store, f)
		for _, name := range foreign {
			require.Equal(t, before[name], after[name], "foreign table %s untouched", name)
		}
		for name, info := range after {
			ref, err := f.Namer().Parse(name)
			if err != nil {
				continue
			}
			tier := f.TierAt(ref, clk.Now())
			require.Equal(t, f.Spec(ref, tier).Capacity, info.Capacity, name)
			require.Equal(t, tier.Name, tiers[name], name)
			require.Equal(t, family.TTLAttribute, info.TTLAttribute, name)
			require.True(t, clk.Now().Before(f.ExpiresAt(ref)), "%s is past retention", name)
		}
		require.Len(t, after, 2+1, "the foreign tables and this week's")

		second, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Empty(t, second, "running twice changes nothing")
		require.Equal(t, after, snapshot(t, store, f.Prefix))
	})
}

// refusing is a store that refuses capacity changes with err: as DynamoDB
// does past its daily limit on decreases (storage.ErrRefused), or as an
// endpoint that cannot be reached fails them (storage.ErrUnavailable).
type refusing struct {
	storage.Store
	mu      sync.Mutex
	refuse  bool
	err     error
	updates int
}

func (s *refusing) UpdateTable(ctx context.Context, name string, u storage.TableUpdate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates++
	if s.refuse && u.Capacity != nil {
		return fmt.Errorf("update table %q: %w", name, s.err)
	}
	return s.Store.UpdateTable(ctx, name, u)
}

func TestRefusalIsDeferredToTheNextCycle(t *testing.T) {
	refusal := fmt.Errorf("%w: LimitExceededException: decreases today", storage.ErrRefused)
	t.Run("refused", func(t *testing.T) { testDeferred(t, refusal, storage.ErrRefused) })
	outage := fmt.Errorf("%w: dial tcp 127.0.0.1:8000: connect: connection refused", storage.ErrUnavailable)
	t.Run("unreachable", func(t *testing.T) { testDeferred(t, outage, storage.ErrUnavailable) })
}

// testDeferred checks that capacity changes failing with err are deferred
// (the cycle does not fail) and done on the next cycle.
func testDeferred(t *testing.T, err, want error) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		oldTables(t, store, f)
		st := &refusing{Store: store, refuse: true, err: err}
		clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: st, Families: []family.Family{f}, Clock: clk})

		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err, "a refusal is not an error")
		deferred := 0
		for _, x := range res {
			if x.Kind == lifecycle.UpdateCapacity {
				require.Equal(t, lifecycle.Deferred, x.Outcome)
				require.ErrorIs(t, x.Err, want)
				require.Contains(t, x.String(), "deferred: ")
				deferred++
			} else {
				require.Equal(t, lifecycle.Done, x.Outcome, x.Table)
			}
		}
		require.Equal(t, 3, deferred, "the weeks of April 3 and 10 to cold, April 17 to warm")
		require.Equal(t, deferred, st.updates, "one attempt each, no retry loop")

		st.refuse = false
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Len(t, res, 3)
		for _, x := range res {
			require.Equal(t, lifecycle.Done, x.Outcome)
		}
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Empty(t, res)
	})
}

// fakeArchiver records archives in memory; broken makes Archive fail.
type fakeArchiver struct {
	mu       sync.Mutex
	verified map[string]bool
	broken   bool
}

func (a *fakeArchiver) Verified(_ context.Context, table string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.verified[table], nil
}

func (a *fakeArchiver) Archive(_ context.Context, table string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.broken {
		return errors.New("archive: disk full")
	}
	a.verified[table] = true
	return nil
}

func TestArchiveBeforeDelete(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		f.Retention = 7 * 24 * time.Hour
		f.Archive, f.ArchiveFormat = "file:///archive", family.ArchiveParquet
		oldTables(t, store, f)
		arch := &fakeArchiver{verified: map[string]bool{}, broken: true}
		var targets []string
		clk := clock.NewManual(at("2017-05-08T00:00:00Z")) // April's tables expire May 8
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk,
			OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
				targets = append(targets, target+" "+string(format))
				return arch, nil
			}})

		// The archive fails: nothing is deleted, the cycle reports it.
		res, err := r.Reconcile(ctx, false)
		require.ErrorIs(t, err, lifecycle.ErrActionsFailed)
		archives := 0
		for _, x := range res {
			require.NotEqual(t, lifecycle.Delete, x.Kind)
			if x.Kind == lifecycle.Archive {
				archives++
				require.Equal(t, lifecycle.Failed, x.Outcome)
				require.Contains(t, x.String(), "failed: archive: disk full")
			}
		}
		require.Equal(t, 3, archives)
		require.Len(t, snapshot(t, store, f.Prefix), 2+3+1, "foreign, old and this week's")

		// The archive works: archived this cycle, deleted the next.
		arch.broken = false
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Len(t, res, 3)
		for _, x := range res {
			require.Equal(t, lifecycle.Archive, x.Kind)
		}
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Len(t, res, 3)
		for _, x := range res {
			require.Equal(t, lifecycle.Delete, x.Kind)
			require.Equal(t, lifecycle.Done, x.Outcome)
		}
		require.Len(t, snapshot(t, store, f.Prefix), 2+1)
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.Empty(t, res)
		require.Equal(t, []string{"file:///archive parquet"}, targets, "the archiver is opened once, in the family's format")
	})
}

type fixedLeaser struct{ held bool }

func (l fixedLeaser) Acquire(context.Context, string, string, time.Duration) (bool, error) {
	return l.held, nil
}

func (l fixedLeaser) Release(context.Context, string, string) error { return nil }

func TestLeaseHeldElsewhereDoesNothing(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		oldTables(t, store, f)
		before := snapshot(t, store, f.Prefix)
		clk := clock.NewManual(at("2017-05-08T00:00:00Z"))
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk, Leaser: fixedLeaser{}})
		_, err := r.Reconcile(ctx, false)
		require.ErrorIs(t, err, lifecycle.ErrLeaseHeld)
		require.Equal(t, before, snapshot(t, store, f.Prefix))

		// A dry run needs no lease.
		res, err := r.Reconcile(ctx, true)
		require.NoError(t, err)
		require.NotEmpty(t, res)

		r = reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk, Leaser: fixedLeaser{held: true}})
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		require.NotEmpty(t, res)
	})
}

func TestReconcileKinds(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		oldTables(t, store, f)
		clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk})
		registers := toRegister(t, store, f)
		res, err := r.ReconcileKinds(ctx, false, lifecycle.Create)
		require.NoError(t, err)
		require.Len(t, res, 1+registers, "the old tables are registered, whatever the kinds")
		kinds := map[lifecycle.Kind]int{}
		for _, x := range res {
			kinds[x.Kind]++
		}
		want := map[lifecycle.Kind]int{lifecycle.Create: 1, lifecycle.Register: registers}
		if registers == 0 {
			delete(want, lifecycle.Register)
		}
		require.Equal(t, want, kinds)
		res, err = r.ReconcileKinds(ctx, false, lifecycle.UpdateBilling, lifecycle.UpdateCapacity, lifecycle.EnableTTL)
		require.NoError(t, err)
		var names []string
		for _, x := range res {
			names = append(names, string(x.Kind))
		}
		sort.Strings(names)
		require.Equal(t, []string{"update_capacity", "update_capacity", "update_capacity"}, names)
	})
}

// TestRun follows a run in a synctest bubble, whose fake clock moves only
// when every goroutine of the test waits: a cycle at once, the next one
// between 0.8 and 1.2 intervals after the last (its jitter), each at the
// time it runs, and a stop when the context ends. The store, Pebble in a
// temporary directory, is opened in the bubble, so that its goroutines
// are the bubble's too.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, cfg := backends.Pebble().Open(t)
		start := time.Now().UTC() // the bubble's clock: midnight of 2000-01-01
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, Clock: clock.Real{}})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			r.Run(ctx, time.Hour)
			close(done)
		}()
		lastStart := func() time.Time {
			c, ok := r.LastCycle()
			require.True(t, ok, "a cycle ran")
			return c.Start
		}

		// The first cycle runs at once; Run then waits on its timer.
		synctest.Wait()
		require.Equal(t, start, lastStart())
		name := cfg.Families[0].Namer().Format(cfg.Families[0].TableFor(start, start))
		_, err := store.DescribeTable(ctx, name)
		require.NoError(t, err, "the first cycle made the current table")

		for i := 1; i <= 3; i++ {
			last := lastStart()
			// Short of 0.8 of the interval: no cycle.
			time.Sleep(time.Until(last.Add(48*time.Minute - time.Nanosecond)))
			synctest.Wait()
			require.Equal(t, last, lastStart(), "cycle %d", i)
			// By 1.2 of the interval: a cycle ran, at its time.
			time.Sleep(time.Until(last.Add(72 * time.Minute)))
			synctest.Wait()
			next := lastStart()
			require.True(t, !next.Before(last.Add(48*time.Minute)) && !next.After(last.Add(72*time.Minute)), "cycle %d at %s, the last at %s", i, next, last)
		}

		cancel()
		<-done
	})
}

// quotaStore refuses every CreateTable as DynamoDB does once the account
// has as many tables as its quota allows.
type quotaStore struct{ storage.Store }

func (s quotaStore) CreateTable(ctx context.Context, spec storage.TableSpec) error {
	if strings.HasSuffix(spec.Name, "meta") {
		return s.Store.CreateTable(ctx, spec)
	}
	return fmt.Errorf("create table %q: %w: LimitExceededException: limit of 2500 tables", spec.Name, storage.ErrTableQuota)
}

// The table quota is loud: the cycle fails (as does the Lambda
// invocation), the result says what to do, and a metric says so.
func TestTableQuotaFailsTheCycle(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	reg := prometheus.NewRegistry()
	r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: quotaStore{store}, Families: cfg.Families, Clock: clock.NewManual(at("2017-04-12T10:00:00Z")), Registerer: reg})
	res, err := lifecycle.HandleLambda(context.Background(), r, lifecycle.LambdaEvent{Operation: "reconcile"})
	require.ErrorIs(t, err, lifecycle.ErrActionsFailed)
	require.Len(t, res.Actions, 1)
	require.Equal(t, "failed", res.Actions[0].Result[:len("failed")])
	require.Contains(t, res.Actions[0].Result, "Service Quotas")
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP timetable_lifecycle_table_quota_reached 1 while the last table the lifecycle tried to create met the account's table quota, 0 once one is created.
# TYPE timetable_lifecycle_table_quota_reached gauge
timetable_lifecycle_table_quota_reached 1
`), "timetable_lifecycle_table_quota_reached"))

	// The registry keeps the refusal, for `timetable tables` and the
	// admin API to show, until the table is made.
	f := cfg.Families[0]
	entries, err := registry.New(store, metaFor(f)).List(context.Background(), f.Name)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, registry.Creating, entries[0].State)
	require.Contains(t, entries[0].CreateError, "LimitExceededException")
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(at("2017-04-12T10:00:00Z")), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	tables, err := db.Tables(context.Background())
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.Len(t, tables, 1)
	require.Equal(t, "creating", tables[0].State)
	require.Equal(t, entries[0].CreateError, tables[0].CreateError)

	r = reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, Clock: clock.NewManual(at("2017-04-12T10:00:00Z")), Registerer: prometheus.NewRegistry()})
	// Once the quota is raised, the next cycle makes the table at once.
	res2, err := r.Reconcile(context.Background(), false)
	require.NoError(t, err)
	require.Len(t, res2, 1)
	require.Equal(t, lifecycle.Create, res2[0].Kind)
	require.Contains(t, res2[0].Reason, "the last attempt failed")
	entries, err = registry.New(store, metaFor(f)).List(context.Background(), f.Name)
	require.NoError(t, err)
	require.Equal(t, registry.Active, entries[0].State)
	require.Empty(t, entries[0].CreateError)
}
