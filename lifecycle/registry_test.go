package lifecycle_test

import (
	"cmp"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// The registry and the store are compared every cycle: a table of the
// family made behind timetable's back is registered, a registered table
// deleted behind its back is marked missing, and nothing else is touched.
func TestDriftIsReconciled(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, Clock: clk})
		_, err := r.Reconcile(ctx, false)
		require.NoError(t, err)

		// Registered: two old weeks.
		reg := registry.New(store, metaFor(f))
		var made []registry.Entry
		for _, week := range []string{"2017-04-03T10:00:00Z", "2017-04-10T10:00:00Z"} {
			ref := f.TableFor(at(week), at(week))
			e, err := reg.Create(ctx, store, registry.NewEntry(f, ref, at(week)), at(week))
			require.NoError(t, err)
			made = append(made, e)
		}
		// Behind timetable's back: one deleted, one whose entry was lost
		// (tagged with this deployment's meta table), one of another
		// deployment and one made by hand, both named as the family's,
		// and two foreign tables, one of them inside the prefix.
		require.NoError(t, backends.Drop(ctx, store, made[0].Name))
		byHand := ownSpec(f, f.TableFor(at("2017-03-27T10:00:00Z"), at("2017-03-27T10:00:00Z")), f.Tiers[0])
		require.NoError(t, store.CreateTable(ctx, byHand))
		others := f.Spec(f.TableFor(at("2017-03-20T10:00:00Z"), at("2017-03-20T10:00:00Z")), f.Tiers[0])
		others.Tags[family.TagMeta] = "tt_meta_of_another_deployment"
		untagged := f.Spec(f.TableFor(at("2017-03-13T10:00:00Z"), at("2017-03-13T10:00:00Z")), f.Tiers[0])
		for _, spec := range []storage.TableSpec{others, untagged} {
			require.NoError(t, store.CreateTable(ctx, spec))
			t.Cleanup(func() { _ = backends.Drop(ctx, store, spec.Name) })
		}
		for _, name := range []string{f.Prefix + "notes", "zz" + f.Prefix + "other"} {
			require.NoError(t, store.CreateTable(ctx, storage.TableSpec{Name: name}))
			t.Cleanup(func() { _ = store.DeleteTable(ctx, name) })
		}

		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		kinds := map[string]lifecycle.Kind{}
		for _, x := range res {
			if x.Kind == lifecycle.Register || x.Kind == lifecycle.Forget {
				kinds[x.Table] = x.Kind
			}
			require.NotContains(t, []string{f.Prefix + "notes", "zz" + f.Prefix + "other", others.Name, untagged.Name}, x.Table, "a foreign table is never touched")
		}
		want := map[string]lifecycle.Kind{made[0].Name: lifecycle.Forget, byHand.Name: lifecycle.Register}
		info, err := store.DescribeTable(ctx, byHand.Name)
		require.NoError(t, err)
		tagged := info.Tags[family.TagMeta] != ""
		if !tagged {
			// An endpoint without tags (DynamoDB Local) proves no table
			// this deployment's: only an operator adopts it.
			delete(want, byHand.Name)
		}
		require.Equal(t, want, kinds)

		gone, err := reg.Get(ctx, f.Name, made[0].Ref.Period.Start, made[0].Name)
		require.NoError(t, err)
		require.Equal(t, registry.Missing, gone.State)
		if tagged {
			adopted, err := reg.Get(ctx, f.Name, at("2017-03-26T00:00:00Z"), byHand.Name)
			require.NoError(t, err)
			require.Equal(t, registry.Active, adopted.State)
			require.Contains(t, []string{registry.SourceTags, registry.SourceName}, adopted.Source)
		}

		// Mended: the next cycle has nothing to mend.
		res, err = r.Reconcile(ctx, false)
		require.NoError(t, err)
		for _, x := range res {
			require.NotContains(t, []lifecycle.Kind{lifecycle.Register, lifecycle.Forget}, x.Kind, x.Table)
		}
	})
}

// metaFor returns the meta table of the test whose family is f.
func metaFor(f family.Family) string {
	if m, ok := metaTables.Load(f.Prefix); ok && m.(string) != "" {
		return m.(string)
	}
	return lifecycle.DefaultMetaTable
}

// controlPlane counts a DynamoDB client's calls by operation.
type controlPlane struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *controlPlane) install(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("countCalls", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.calls[awsmiddleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

func (c *controlPlane) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.calls
	c.calls = map[string]int{}
	return old
}

// A cycle with 250 registered tables and nothing to do makes no call per
// table: the registry Query and the ListTables pages, nothing else. 250
// tables take three ListTables pages, and a call per table would be 250.
func TestQuietCycleCallsDoNotGrowWithTables(t *testing.T) {
	if os.Getenv(backends.EndpointEnv) == "" {
		t.Skipf("set %s or run `make test` to start a DynamoDB-API server", backends.EndpointEnv)
	}
	if testing.Short() {
		t.Skip("makes 250 tables")
	}
	ctx := context.Background()
	_, cfg := backends.Dynamo().Open(t)
	counter := &controlPlane{calls: map[string]int{}}
	store, err := dynamostore.Open(ctx, dynamostore.Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	require.NoError(t, err)
	f := cfg.Families[0]
	// A prefix of the test's own: its 250 tables are deleted here, at
	// once, not one by one by the backend.
	f.Prefix = "q" + f.Prefix
	t.Cleanup(func() {
		var names []string
		_ = store.ListTables(ctx, f.Prefix, func(name string) bool {
			if !strings.HasPrefix(name, f.Prefix) {
				return false // another test's table: never touched
			}
			names = append(names, name)
			return true
		})
		var g errgroup.Group
		g.SetLimit(16)
		for _, name := range names {
			g.Go(func() error {
				_, err := store.Client().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
				return err
			})
		}
		_ = g.Wait()
		store.Close()
	})
	f.Tiers = f.Tiers[:1] // one tier: nothing ever moves
	f.Tiers[0].Capacity = storage.Capacity{Billing: storage.OnDemand}
	f.Backfill = f.Tiers[0]
	f.Backfill.Name = family.BackfillTier
	now := at("2017-04-12T10:00:00Z")
	clk := clock.NewManual(now)
	r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: []family.Family{f}, MetaTable: cfg.MetaTable, Clock: clk})
	_, err = r.Reconcile(ctx, false) // makes the meta table and this week's
	require.NoError(t, err)

	reg := registry.New(store, cfg.MetaTable)
	const tables = 250
	var g errgroup.Group
	g.SetLimit(16)
	for i := 1; i < tables; i++ {
		week := now.Add(-time.Duration(i) * 7 * 24 * time.Hour)
		g.Go(func() error {
			// As Create makes them, without waiting for each to be
			// ACTIVE: the cycle below does not look at states.
			e := registry.NewEntry(f, f.TableFor(week, week), week)
			e.State = registry.Active
			if _, err := reg.Register(ctx, e); err != nil {
				return err
			}
			spec := e.Spec()
			_, err := store.Client().CreateTable(ctx, &dynamodb.CreateTableInput{
				TableName:            aws.String(spec.Name),
				BillingMode:          types.BillingModePayPerRequest,
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
			})
			return err
		})
	}
	require.NoError(t, g.Wait())
	res, err := r.Reconcile(ctx, false)
	require.NoError(t, err)
	require.Empty(t, res, "nothing to do")

	counter.reset()
	res, err = r.Reconcile(ctx, false)
	require.NoError(t, err)
	require.Empty(t, res)
	calls := counter.reset()
	t.Logf("a quiet cycle over %d tables: %v", tables, calls)
	pages := (tables + 1 + 99) / 100 // the family's tables and the meta table's name
	require.LessOrEqual(t, calls["ListTables"], pages+1, "%v", calls)
	delete(calls, "ListTables")
	// The registry's pages (data plane), and no control-plane call.
	require.LessOrEqual(t, calls["Query"], 2, "%v", calls)
	delete(calls, "Query")
	// The capacity sweep's share of the tables: ceil(250 × 5 min / 24 h)
	// descriptions, each a DescribeTable, its tags and its TTL.
	for _, op := range []string{"DescribeTable", "ListTagsOfResource", "DescribeTimeToLive"} {
		require.LessOrEqual(t, calls[op], 2, "%v", calls)
		delete(calls, op)
	}
	require.Empty(t, calls, "no call per table")
}

// Capacity changed behind the registry's back is found by the sweep
// within a day of cycles and put back where the tier says; a change to
// what the tier says anyway is recorded.
func TestCapacityDriftIsSweptBack(t *testing.T) {
	each(t, func(t *testing.T, store storage.Store, f family.Family) {
		ctx := context.Background()
		clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
		r := reconciler(t, lifecycle.Options{Store: store, Families: []family.Family{f}, Clock: clk})
		_, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		reg := registry.New(store, metaFor(f))
		entries, err := reg.List(ctx, f.Name)
		require.NoError(t, err)
		require.NotEmpty(t, entries)
		hot := entries[len(entries)-1]
		for _, e := range entries {
			if e.Tier == "hot" {
				hot = e
			}
		}
		require.Equal(t, storage.Provisioned, hot.Capacity.Billing)
		changed := storage.Capacity{Billing: storage.Provisioned, Read: hot.Capacity.Read + 7, Write: hot.Capacity.Write + 3}
		require.NoError(t, store.UpdateTable(ctx, hot.Name, storage.TableUpdate{Capacity: &changed}))

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
		require.Len(t, found, 1, "found within a day of cycles")
		require.Equal(t, lifecycle.UpdateCapacity, found[0].Kind)
		require.Equal(t, lifecycle.Done, found[0].Outcome)
		info, err := store.DescribeTable(ctx, hot.Name)
		require.NoError(t, err)
		require.Equal(t, hot.Capacity, info.Capacity, "put back")
		back, err := reg.Get(ctx, f.Name, hot.Ref.Period.Start, hot.Name)
		require.NoError(t, err)
		require.Equal(t, hot.Capacity, back.Capacity)
	})
}

// A table class changed behind the registry's back is found by the sweep
// and put back where the tier says. DynamoDB counts the change made
// outside among the two it allows in 30 days, and so does the registry
// entry: once they are spent, the class found is recorded and kept, with
// the reason, until the window lets the tier's class back. DynamoDB Local
// and dynalite ignore the class; the backend's dynamofault.ControlPlane
// records it and refuses what DynamoDB would.
func TestClassDriftIsSweptBack(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			clk := clock.NewManual(at("2017-04-24T12:00:00Z"))
			var store storage.Store
			var cfg family.Schema
			var cp *dynamofault.ControlPlane
			if b.Name == "dynamodb" {
				store, cfg, cp, _ = backends.OpenDynamo(t, clk.Now)
			} else {
				store, cfg = b.Open(t)
			}
			f := cfg.Families[0] // the default tiers: hot and warm standard, cold infrequent access
			meta := cmp.Or(cfg.MetaTable, lifecycle.DefaultMetaTable)
			r := reconciler(t, lifecycle.Options{Store: store, Families: []family.Family{f}, MetaTable: meta, Clock: clk})
			reg := registry.New(store, meta)
			_, err := r.Reconcile(ctx, false)
			require.NoError(t, err)
			entries, err := reg.List(ctx, f.Name)
			require.NoError(t, err)
			var hot registry.Entry
			for _, e := range entries {
				if e.Tier == "hot" {
					hot = e
				}
			}
			require.NotEmpty(t, hot.Name)
			classOf := func() storage.Class {
				info, err := store.DescribeTable(ctx, hot.Name)
				require.NoError(t, err)
				return info.Capacity.Normal().Class
			}
			entry := func() registry.Entry {
				e, err := reg.Get(ctx, f.Name, hot.Ref.Period.Start, hot.Name)
				require.NoError(t, err)
				return e
			}
			setClass := func(c storage.Class) {
				capacity := entry().Capacity
				capacity.Class = c
				require.NoError(t, store.UpdateTable(ctx, hot.Name, storage.TableUpdate{Capacity: &capacity}))
			}
			// sweep runs five-minute cycles until one acts on the table
			// for a class drift, for at most a day.
			sweep := func() lifecycle.Result {
				for cycle := 0; cycle < 288; cycle++ {
					clk.Advance(5 * time.Minute)
					res, err := r.Reconcile(ctx, false)
					require.NoError(t, err)
					for _, x := range res {
						if x.Table == hot.Name && strings.Contains(x.Reason, "table class changed outside timetable") {
							return x
						}
					}
				}
				t.Fatal("class drift not found within a day of cycles")
				return lifecycle.Result{}
			}

			// Standard-IA by hand on the hot table: put back.
			setClass(storage.ClassInfrequentAccess)
			x := sweep()
			require.Equal(t, lifecycle.UpdateCapacity, x.Kind, x.Reason)
			require.Equal(t, lifecycle.Done, x.Outcome, "%v", x.Err)
			require.Contains(t, x.Reason, "the store has infrequent_access, the registry standard")
			require.Equal(t, storage.ClassStandard, classOf())
			require.Len(t, entry().ClassChanges, 2, "the change by hand and the one back")

			// A month on, the table is cold and infrequent access; set
			// back to standard by hand, the second change in 30 days:
			// recorded and kept until the first is 30 days old.
			clk.Advance(31 * 24 * time.Hour)
			_, err = r.Reconcile(ctx, false)
			require.NoError(t, err)
			require.Equal(t, "cold", entry().Tier)
			require.Equal(t, storage.ClassInfrequentAccess, classOf())
			cold := entry().ClassChanges
			require.Len(t, cold, 1)
			setClass(storage.ClassStandard)
			x = sweep()
			require.Equal(t, lifecycle.Register, x.Kind, x.Reason)
			require.Equal(t, lifecycle.Done, x.Outcome, "%v", x.Err)
			require.Contains(t, x.Reason, "class standard kept until "+cold[0].Add(family.ClassChangeWindow).Format(time.RFC3339))
			require.Equal(t, storage.ClassStandard, classOf())
			e := entry()
			require.Equal(t, storage.ClassStandard, e.Capacity.Normal().Class, "the registry learns the class found")
			require.Len(t, e.ClassChanges, 2)
			res, err := r.Reconcile(ctx, false)
			require.NoError(t, err)
			for _, x := range res {
				require.NotEqual(t, hot.Name, x.Table, "nothing to do until the window: %s", x.Reason)
			}

			// Once the cold change is 30 days old, the tier's class is
			// applied.
			clk.Set(cold[0].Add(family.ClassChangeWindow + time.Minute))
			res, err = r.Reconcile(ctx, false)
			require.NoError(t, err)
			var back []lifecycle.Result
			for _, x := range res {
				if x.Table == hot.Name {
					back = append(back, x)
				}
			}
			require.Len(t, back, 1)
			require.Equal(t, lifecycle.UpdateCapacity, back[0].Kind, back[0].Reason)
			require.Equal(t, lifecycle.Done, back[0].Outcome, "%v", back[0].Err)
			require.Equal(t, storage.ClassInfrequentAccess, classOf())
			if cp != nil {
				require.Empty(t, cp.Refusals(), "requests that broke DynamoDB's rules")
			}
		})
	}
}
