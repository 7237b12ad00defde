package lifecycle_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
)

// The policy of the time-travel test, written out again without package
// family: weeks from Sunday, write-time grouping by month, the default
// tiers, a prebuild of an hour, 15 minutes of grace, three weeks of
// retention.
const (
	week      = 7 * 24 * time.Hour
	prebuild  = time.Hour
	grace     = 15 * time.Minute
	retention = 3 * week
)

type modelTable struct {
	week  time.Time // the period's start
	month time.Time // the write month's first day
}

func weekOf(t time.Time) time.Time {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return d.AddDate(0, 0, -int(d.Weekday()))
}

func monthOf(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }

func (m modelTable) name(prefix string) string {
	start := m.week.UnixMilli()
	return prefix + strconv.FormatInt(start, 10) + "_" + strconv.FormatInt(start+week.Milliseconds()-1000, 10) +
		"_" + strconv.Itoa(int(m.month.Month())) + "_" + strconv.Itoa(m.month.Year())
}

func (m modelTable) expires() time.Time {
	end := m.week.Add(week)
	if monthEnd := m.month.AddDate(0, 1, 0); monthEnd.After(end) {
		end = monthEnd
	}
	return end.Add(retention)
}

// capacity is the tier the model gives a table made at created at now:
// the default tiers, all on demand, the cold one of the Standard-IA
// class. A table of a write month that ends within its week goes warm
// once that month and grace are over.
func (m modelTable) capacity(created, now time.Time) (string, storage.Capacity) {
	standard := storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard}
	ages := m.week
	if !created.Before(m.week.Add(week)) && now.Before(monthOf(created).AddDate(0, 1, 0).Add(grace)) {
		// Made after its week ended: a backfill, on demand while the
		// month it was made in lasts.
		return "backfill", standard
	}
	warm := ages.Add(week + grace)
	if monthEnd := m.month.AddDate(0, 1, 0).Add(grace); monthEnd.Before(warm) {
		warm = monthEnd
	}
	switch {
	case now.Before(warm):
		return "hot", standard
	case now.Before(ages.Add(2*week + grace)):
		return "warm", standard
	}
	return "cold", storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassInfrequentAccess}
}

// expect notes that table m exists from now on, unless it did already.
func expect(expected map[modelTable]time.Time, m modelTable, now time.Time) {
	if _, ok := expected[m]; !ok {
		expected[m] = now
	}
}

// steps returns the times the walk stops at: every other day at noon, and
// around every week and month boundary (few, so that the walk stays
// quick on dynalite).
func steps(start, end time.Time) []time.Time {
	var out []time.Time
	for d := start; d.Before(end); d = d.Add(24 * time.Hour) {
		if d.Sub(start)%(48*time.Hour) == 0 {
			out = append(out, d.Add(12*time.Hour))
		}
		var b []time.Time
		if d.Weekday() == time.Sunday {
			b = append(b, d)
		}
		if d.Day() == 1 {
			b = append(b, d)
		}
		for _, at := range b {
			for _, off := range []time.Duration{-prebuild - time.Minute, -prebuild, 0, grace - time.Minute, grace} {
				out = append(out, at.Add(off))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return slices.CompactFunc(out, func(a, b time.Time) bool { return a.Equal(b) })
}

// TestTimeTravel walks ten weeks on every backend, writing through the
// engine and reconciling at each step, and checks the tables against the
// model above.
func TestTimeTravel(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, cfg := b.Open(t)
			metaTables.Store(cfg.Families[0].Prefix, cfg.MetaTable)
			cfg.Families[0].Retention = retention
			f := cfg.Families[0]
			start := time.Date(2017, 4, 1, 0, 0, 0, 0, time.UTC) // a Saturday
			clk := clock.NewManual(start)
			db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer db.Close()
			r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clk})

			expected := map[modelTable]time.Time{} // when each table was made
			type written struct {
				at    time.Time
				table modelTable
			}
			var onTime []written
			// car-9 went offline on March 30 and comes back six weeks later
			// with data across the end of March.
			late := []time.Time{
				time.Date(2017, 3, 31, 20, 0, 0, 0, time.UTC),
				time.Date(2017, 4, 1, 4, 0, 0, 0, time.UTC),
				time.Date(2017, 4, 20, 9, 0, 0, 0, time.UTC),
			}
			back := time.Date(2017, 5, 12, 12, 0, 0, 0, time.UTC)
			uploaded := false

			for i, now := range steps(start, start.Add(10*week)) {
				clk.Set(now)
				events := []event.Event{{Time: now, Series: "car-1", Fields: map[string]any{"step": json.Number(strconv.Itoa(i))}}}
				onTime = append(onTime, written{now, modelTable{weekOf(now), monthOf(now)}})
				if !uploaded && !now.Before(back) {
					for _, e := range late {
						events = append(events, event.Event{Time: e, Series: "car-9", Fields: map[string]any{"late": true}})
						expect(expected, modelTable{weekOf(e), monthOf(now)}, now)
					}
					uploaded = true
				}
				_, err := db.Write(ctx, "acme", "cars", events)
				require.NoError(t, err, "write at %s", now)
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err, "reconcile at %s", now)
				for _, x := range res {
					require.Equal(t, lifecycle.Done, x.Outcome, "%s %s at %s", x.Kind, x.Table, now)
				}

				// The model: tables written to, this period's and the
				// ones prebuilt, less those past retention.
				expect(expected, modelTable{weekOf(now), monthOf(now)}, now)
				soon := now.Add(prebuild)
				expect(expected, modelTable{weekOf(soon), monthOf(soon)}, now)
				want := map[string]storage.Capacity{}
				wantTier := map[string]string{}
				for m, created := range expected {
					if !now.Before(m.expires()) {
						delete(expected, m)
						continue
					}
					wantTier[m.name(f.Prefix)], want[m.name(f.Prefix)] = m.capacity(created, now)
				}
				got := map[string]storage.Capacity{}
				gotTier := map[string]string{}
				tiers := registryTiers(t, store, f)
				for name, info := range snapshot(t, store, f.Prefix) {
					got[name], gotTier[name] = info.Capacity, tiers[name]
				}
				require.Equal(t, want, got, "tables and capacities at %s", now)
				require.Equal(t, wantTier, gotTier, "tiers at %s", now)

				// No event is lost but to retention.
				kept := 0
				for _, w := range onTime {
					if now.Before(w.table.expires()) {
						kept++
					}
				}
				q := engine.Query{Table: "cars", Series: "car-1", From: start.Add(-week), To: now, Limit: 1000}
				require.Len(t, queryAll(t, db, q), kept, "car-1 at %s", now)
				if uploaded {
					// Late data is found after its week went cold, and
					// after the tables of its week's own write months went.
					q := engine.Query{Table: "cars", Series: "car-9", From: late[0].Add(-time.Hour), To: now, Limit: 1000}
					require.Len(t, queryAll(t, db, q), len(late), "car-9 at %s", now)
				}
			}
			require.True(t, uploaded)
		})
	}
}

func queryAll(t *testing.T, db *engine.DB, q engine.Query) []event.Event {
	t.Helper()
	var out []event.Event
	for range 1000 {
		p, err := db.Query(context.Background(), "acme", q)
		require.NoError(t, err)
		out = append(out, p.Events...)
		if p.NextCursor == "" {
			return out
		}
		q.Cursor = p.NextCursor
	}
	t.Fatal("cursor walk did not end")
	return nil
}
