package lifecycle_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// tableState is what a table was set to from a moment on.
type tableState struct {
	at       time.Time
	capacity storage.Capacity
	pitr     int
}

// tableLife is what the recording store saw of a table.
type tableLife struct {
	states  []tableState
	deleted time.Time
}

// recordingStore records, by the clock, every table the lifecycle
// creates, changes and deletes, with the capacity, class and
// point-in-time recovery the store says it has after each call.
type recordingStore struct {
	*pebblestore.Store
	clk    clock.Clock
	prefix string

	mu     sync.Mutex
	tables map[string]*tableLife
}

func (s *recordingStore) record(ctx context.Context, name string) {
	info, err := s.Store.DescribeTable(ctx, name)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.tables[name]
	if l == nil {
		l = &tableLife{}
		s.tables[name] = l
	}
	l.states = append(l.states, tableState{at: s.clk.Now(), capacity: info.Capacity, pitr: info.PITRDays})
}

func (s *recordingStore) CreateTable(ctx context.Context, spec storage.TableSpec) error {
	err := s.Store.CreateTable(ctx, spec)
	if err == nil && strings.HasPrefix(spec.Name, s.prefix) {
		s.record(ctx, spec.Name)
	}
	return err
}

func (s *recordingStore) UpdateTable(ctx context.Context, name string, u storage.TableUpdate) error {
	err := s.Store.UpdateTable(ctx, name, u)
	if err == nil && strings.HasPrefix(name, s.prefix) {
		s.record(ctx, name)
	}
	return err
}

func (s *recordingStore) DeleteTable(ctx context.Context, name string) error {
	err := s.Store.DeleteTable(ctx, name)
	if err == nil && strings.HasPrefix(name, s.prefix) {
		s.mu.Lock()
		if l := s.tables[name]; l != nil {
			l.deleted = s.clk.Now()
		}
		s.mu.Unlock()
	}
	return err
}

// recordingArchiver archives as fakeArchiver does, and records when each
// table was exported and scanned to check it before its delete
// (lifecycle's tableChecker, package archive's CheckTable).
type recordingArchiver struct {
	fakeArchiver
	clk               clock.Clock
	exported, checked map[string]time.Time
}

func (a *recordingArchiver) Archive(ctx context.Context, table string) error {
	a.mu.Lock()
	a.exported[table] = a.clk.Now()
	a.mu.Unlock()
	return a.fakeArchiver.Archive(ctx, table)
}

func (a *recordingArchiver) CheckTable(_ context.Context, table string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checked[table] = a.clk.Now()
	return "", nil
}

// TestYearOfCallsIsThePlan applies the family `timetable plan --apply`
// writes for the AWS guide's stream (600 events/s of 180 bytes, on S3
// after 30 days, kept 120) and steps the lifecycle manager through the
// second half of a year on a fake clock over a store that records every table's creation,
// capacity, class and point-in-time recovery changes and deletion, and
// an archiver that records every export and every check before a delete.
// The last month's recorded calls, with the data each table holds at the
// stream's rate, are priced by the planner's model (planner.Usage.Bill):
// capacity unit-hours and requests per table as the store had them,
// storage and point-in-time recovery GB-hours, a table's size exported
// and scanned once each time the archiver was called, its archive on S3
// until the retention; the total is the plan's within 5%.
func TestYearOfCallsIsThePlan(t *testing.T) {
	backends.NoDynamoDB(t)
	const day = 24 * time.Hour
	in := planner.Input{ItemBytes: 180, Rate: 600, Retention: 120 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"}
	r, err := planner.Plan(in)
	require.NoError(t, err)
	require.Equal(t, "day", r.Period)
	doc, err := planner.ApplyFamily(nil, r.Family)
	require.NoError(t, err)
	c, err := config.Parse(doc)
	require.NoError(t, err)
	f := c.Families[0]

	ctx := context.Background()
	// The walk starts empty half a year before the year's end: by the
	// last month, every table that month's bill holds (in DynamoDB for 30
	// days, on S3 until 120) was made, archived and deleted by the walk,
	// as in a walk of the whole year, which priced the same month alike
	// at six times the cycles of the month.
	end := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(0, -6, 0)
	clk := clock.NewManual(start.Add(-prebuild))
	inner, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem(), Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { inner.Close() })
	store := &recordingStore{Store: inner, clk: clk, prefix: f.Prefix, tables: map[string]*tableLife{}}
	arch := &recordingArchiver{fakeArchiver: fakeArchiver{verified: map[string]bool{}}, clk: clk,
		exported: map[string]time.Time{}, checked: map[string]time.Time{}}
	rec := reconciler(t, lifecycle.Options{Store: store, Families: []family.Family{f}, MetaTable: backends.MetaTable(c.Schema), Clock: clk,
		OpenArchiver: func(string, family.ArchiveFormat) (lifecycle.Archiver, error) { return arch, nil }})

	// Every day: the prebuild of the next table, the grace's end (tiers
	// change, tables past retention are fenced), then cycles five minutes
	// apart, for the fence to settle, the archive and the delete.
	for d := start; d.Before(end); d = d.Add(day) {
		for _, off := range []time.Duration{-prebuild, grace, grace + 5*time.Minute, grace + 10*time.Minute} {
			clk.Set(d.Add(off))
			res, err := rec.Reconcile(ctx, false)
			require.NoError(t, err, "reconcile at %s", clk.Now())
			for _, x := range res {
				require.Contains(t, []lifecycle.Outcome{lifecycle.Done, lifecycle.Deferred}, x.Outcome, "%s %s at %s: %s", x.Kind, x.Table, clk.Now(), x)
			}
		}
	}

	// The last month, in steady state since the walk's fifth.
	to := end.Add(-prebuild)
	from := to.Add(-730 * time.Hour)
	got := priceRecorded(t, f, r, in, store, arch, from, to)
	bill := got.Bill(r.Prices)
	for _, cat := range []string{planner.CategoryWrite, planner.CategoryRead, planner.CategoryStorage, planner.CategoryBackup, planner.CategoryArchive, planner.CategoryArchiving, planner.CategoryFreeTier} {
		t.Logf("%-10s recorded %10.2f  planned %10.2f", cat, bill.Sum(cat), r.Bill.Sum(cat))
	}
	t.Logf("total      recorded %10.2f  planned %10.2f", bill.Total, r.Bill.Total)
	require.NotZero(t, got.ExportGB, "tables were archived in the month")
	require.NotZero(t, got.ScanReadUnits, "tables were checked before their delete")
	require.InEpsilon(t, r.Bill.Total, bill.Total, 0.05, "the recorded month's bill against the plan's")
}

// priceRecorded turns what the store and the archiver recorded over
// [from, to) into a month's usage, with the data each table holds at the
// plan's rate and item size.
func priceRecorded(t *testing.T, f family.Family, r planner.Report, in planner.Input, store *recordingStore, arch *recordingArchiver, from, to time.Time) planner.Usage {
	t.Helper()
	const step = 15 * time.Minute
	hours := step.Hours()
	perHour := r.Workload.Rate * 3600
	item := r.Item.Bytes
	gb := func(events, each float64) float64 { return events * each / (1 << 30) }
	namer := f.Namer()
	// held returns the events a table of ref holds at t: its period's
	// events of its write month, up to t.
	held := func(ref naming.Ref, t time.Time) float64 {
		lo, hi := ref.Period.Start, ref.Period.End
		if !ref.WriteMonth.IsZero() {
			if s := ref.WriteMonth.Start(); s.After(lo) {
				lo = s
			}
			if e := ref.WriteMonth.End(); e.Before(hi) {
				hi = e
			}
		}
		if t.Before(hi) {
			hi = t
		}
		if !hi.After(lo) {
			return 0
		}
		return hi.Sub(lo).Hours() * perHour
	}
	type key struct {
		billing storage.Billing
		class   storage.Class
	}
	tiers := map[key]*planner.TierUsage{}
	u := planner.Usage{Archived: true}
	names := make([]string, 0, len(store.tables))
	for name := range store.tables {
		names = append(names, name)
	}
	sort.Strings(names)
	var lastClass storage.Class
	for _, name := range names {
		life := store.tables[name]
		ref, err := namer.Parse(name)
		require.NoError(t, err, name)
		for now := from.Add(step / 2); now.Before(to); now = now.Add(step) {
			if now.Before(life.states[0].at) || (!life.deleted.IsZero() && !now.Before(life.deleted)) {
				continue
			}
			st := life.states[0]
			for _, s := range life.states {
				if !s.at.After(now) {
					st = s
				}
			}
			cp := st.capacity.Normal()
			k := key{cp.Billing, cp.Class}
			tu := tiers[k]
			if tu == nil {
				tu = &planner.TierUsage{Tier: strings.ToLower(string(cp.Billing)), Class: cp.Class}
				tiers[k] = tu
			}
			if cp.Billing == storage.Provisioned {
				tu.WCUHours += float64(cp.Write) * hours
				tu.RCUHours += float64(cp.Read) * hours
			} else if held(ref, now.Add(step)) > held(ref, now) {
				tu.WriteUnits += perHour * hours * r.Item.WriteUnits
			}
			stored := gb(held(ref, now), item+planner.StorageOverheadBytes) * hours / 730
			tu.StorageGBMonth += stored
			if st.pitr > 0 {
				tu.PITRGBMonth += stored
			}
		}
		events := held(ref, ref.Period.End)
		if at, ok := arch.exported[name]; ok {
			if !at.Before(from) && at.Before(to) {
				u.ExportGB += gb(events, item+planner.StorageOverheadBytes)
				puts, gets := planner.ArchiveRequests(events * item * r.Workload.ArchiveRatio)
				u.S3Puts += puts
				u.S3Gets += gets
			}
			// On S3 until the retention after its period, as an S3
			// lifecycle rule expires it.
			gone := ref.Period.End.Add(in.Retention)
			lo, hi := at, gone
			if lo.Before(from) {
				lo = from
			}
			if hi.After(to) {
				hi = to
			}
			if hi.After(lo) {
				u.ArchiveGBMonth += gb(events, item*r.Workload.ArchiveRatio) * hi.Sub(lo).Hours() / 730
			}
		}
		if at, ok := arch.checked[name]; ok && !at.Before(from) && at.Before(to) {
			u.ScanReadUnits += events * item / 8192
			lastClass = life.states[len(life.states)-1].capacity.Normal().Class
		}
	}
	u.ScanClass = lastClass
	for _, tu := range tiers {
		u.Tiers = append(u.Tiers, *tu)
	}
	sort.Slice(u.Tiers, func(i, j int) bool {
		return u.Tiers[i].Tier+string(u.Tiers[i].Class) < u.Tiers[j].Tier+string(u.Tiers[j].Class)
	})
	return u
}
