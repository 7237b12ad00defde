package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// rollupUnit is the length of the buckets rollups are kept for.
type rollupUnit struct {
	name string
	d    time.Duration
}

var (
	hourUnit    = rollupUnit{"hour", time.Hour}
	dayUnit     = rollupUnit{"day", 24 * time.Hour}
	rollupUnits = []rollupUnit{hourUnit, dayUnit}
)

// rollupUnitFor returns the rollup unit an aggregate query can use: days
// for calendar buckets (weeks, months and quarters are whole UTC days) and
// when the bucket is a whole number of days, hours when of hours. When
// the table keeps rollups (rollups, its TablePolicy's) and the query
// cannot use them, why says so.
func rollupUnitFor(q AggregateQuery, rollups bool) (u rollupUnit, ok bool, why string) {
	if !rollups {
		return rollupUnit{}, false, ""
	}
	if i := slices.IndexFunc(q.Funcs, agg.IsSketch); i >= 0 {
		return rollupUnit{}, false, fmt.Sprintf("%s is not kept in rollups", q.Funcs[i])
	}
	switch {
	case q.Filter != nil:
		return rollupUnit{}, false, "rollups summarise every event, and the query has a filter"
	case q.GroupBy != "" && q.GroupBy != GroupBySeries:
		return rollupUnit{}, false, "rollups are kept per series, not per value of a field"
	case q.Calendar.Unit != 0:
		return dayUnit, true, ""
	case q.Bucket%dayUnit.d == 0 && q.Offset%dayUnit.d == 0:
		return dayUnit, true, ""
	case q.Bucket%hourUnit.d == 0 && q.Offset%hourUnit.d == 0:
		return hourUnit, true, ""
	case q.Offset%hourUnit.d != 0:
		return rollupUnit{}, false, fmt.Sprintf("buckets offset by %s do not start on whole hours", q.Offset)
	}
	return rollupUnit{}, false, fmt.Sprintf("buckets of %s are not whole hours", q.Bucket)
}

// RollupUse says whether an aggregate would read rollups: "" when the
// table keeps none, "used", or "not used: " and why. The query must have
// passed Aggregate's checks (AggregateQuery.Check).
func (db *DB) RollupUse(q AggregateQuery) string {
	_, ok, why := rollupUnitFor(q, db.policy(q.Table).Rollups)
	switch {
	case ok:
		return "used"
	case why != "":
		return "not used: " + why
	}
	return ""
}

// aggregateRollups answers an aggregate query from rollups for the whole
// units inside the range and from raw events for the partial units at its
// edges.
func (db *DB) aggregateRollups(ctx context.Context, tenant string, q AggregateQuery, pol family.TablePolicy, u rollupUnit, all []physTable) ([]Bucket, error) {
	parts := map[int64]*agg.Summary{}
	at := func(start time.Time) *agg.Summary {
		k := q.bucketStart(start).UnixNano()
		p := parts[k]
		if p == nil {
			p = &agg.Summary{}
			parts[k] = p
		}
		return p
	}
	// One read of the registry (all) serves the whole query.
	within := func(from, to time.Time) []physTable {
		var out []physTable
		for _, t := range all {
			if t.ref.Period.Overlaps(from, to) {
				out = append(out, t)
			}
		}
		return out
	}
	raw := func(from, to time.Time) error {
		tables := within(from, to)
		rq := Query{Table: q.Table, Series: q.Series, From: from, To: to, Fields: q.Fields}
		return db.eachEvent(ctx, sourceSpec{tenant: tenant, q: rq, layout: pol.Layout.Kind, tables: tables}, func(ev event.Event) error {
			at(ev.Time).Add(ev, q.Fields)
			return nil
		})
	}

	first := alignDown(q.From.Add(u.d-1), u.d) // the first whole unit
	end := alignDown(q.To.Add(1), u.d)         // and the end of the last
	if !first.Before(end) {
		if err := raw(q.From, q.To); err != nil {
			return nil, err
		}
	} else {
		if q.From.Before(first) {
			if err := raw(q.From, first.Add(-1)); err != nil {
				return nil, err
			}
		}
		if !end.After(q.To) {
			if err := raw(end, q.To); err != nil {
				return nil, err
			}
		}
		err := db.wholeUnits(ctx, tenant, q, pol, u, first, end, within(first, end.Add(-1)), func(start time.Time, p *agg.Summary) {
			at(start).Merge(p, q.Fields)
		})
		if err != nil {
			return nil, err
		}
	}
	return partsToBuckets(parts, q)
}

// wholeUnits calls emit with the rollup of every series and every unit in
// [first, end), read when valid and computed from raw events (and stored,
// once settled) when not.
func (db *DB) wholeUnits(ctx context.Context, tenant string, q AggregateQuery, pol family.TablePolicy, u rollupUnit, first, end time.Time, tables []physTable, emit func(time.Time, *agg.Summary)) error {
	r := &unitsRead{db: db, tenant: tenant, q: q, f: pol.Family, u: u, first: first, end: end, tables: tables,
		settled: db.opts.Clock.Now().Add(-db.opts.RollupSettle).UnixNano()}
	// The markers first, then the rollups and raw events: a write after
	// this point leaves a marker the stored rollup does not cover.
	series, err := r.readMarkers(ctx)
	if err != nil {
		return err
	}
	homes := r.homes()
	for _, s := range series {
		stored, err := r.storedRollups(ctx, s, homes)
		if err != nil {
			return err
		}
		var stale []time.Time
		for start := first; start.Before(end); start = start.Add(u.d) {
			if p, ok := r.valid(s, start, stored[start.UnixNano()]); ok {
				emit(start, p)
			} else {
				stale = append(stale, start)
			}
		}
		if len(stale) == 0 {
			continue
		}
		fresh, err := db.recompute(ctx, tenant, q.Table, pol.Layout.Kind, s, u, tables, stale)
		if err != nil {
			return err
		}
		for i, start := range stale {
			emit(start, fresh[i])
		}
		r.store(ctx, s, stale, fresh)
	}
	return nil
}

// unitsRead is one aggregate's read of the rollups of the whole units in
// [first, end) of its tables.
type unitsRead struct {
	db         *DB
	tenant     string
	q          AggregateQuery
	f          family.Family
	u          rollupUnit
	first, end time.Time
	tables     []physTable
	settled    int64 // a marker written after this (Unix nanos) may belong to a write still under way
	markers    map[markKey]map[string]any
	newest     map[markKey]int64
}

// readMarkers reads the version markers of the units, by unit, series and
// table, and the newest write each names, and returns the series the
// query reads in name order: the one asked, or every series of the
// tables' indexes and markers.
func (r *unitsRead) readMarkers(ctx context.Context) ([]string, error) {
	r.markers, r.newest = map[markKey]map[string]any{}, map[markKey]int64{}
	series := map[string]struct{}{}
	if r.q.Series != "" {
		series[r.q.Series] = struct{}{}
	}
	for _, t := range r.tables {
		if r.q.Series == "" {
			names, err := listSeries(ctx, r.db.store, t.name, r.tenant, r.q.Table)
			if errors.Is(err, storage.ErrTableNotFound) {
				r.db.forgetTable(t)
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, s := range names {
				series[s] = struct{}{}
			}
		}
		err := scan(ctx, r.db.store, storage.Query{
			Table: t.name, PK: itemenc.MarkerKey(r.tenant, r.q.Table),
			Low: r.u.name + "#" + itemenc.TimeKey(r.first), High: r.u.name + "#" + itemenc.TimeKey(r.end),
		}, func(item storage.Item) {
			unit, start, s, ok := itemenc.ParseMarkerSortKey(item.SK)
			if !ok || unit != r.u.name || (r.q.Series != "" && s != r.q.Series) {
				return
			}
			series[s] = struct{}{}
			k := markKey{unit, start.UnixNano(), s}
			if r.markers[k] == nil {
				r.markers[k] = map[string]any{}
			}
			r.markers[k][t.name] = item.Attrs["n"]
			if n, ok := item.Attrs["at"].(json.Number); ok {
				if v, err := strconv.ParseInt(string(n), 10, 64); err == nil && v > r.newest[k] {
					r.newest[k] = v
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return slices.Sorted(maps.Keys(series)), nil
}

// homeSpan is the units whose rollups live in one home table.
type homeSpan struct {
	table     string
	low, high time.Time // the first and last unit's start
}

// homes returns where the units' rollups live, in time order: each unit's
// in the table its start routes to.
func (r *unitsRead) homes() []homeSpan {
	var out []homeSpan
	for s := r.first; s.Before(r.end); s = s.Add(r.u.d) {
		h := r.db.catalog.home(r.f, s)
		if n := len(out); n > 0 && out[n-1].table == h {
			out[n-1].high = s
		} else {
			out = append(out, homeSpan{h, s, s})
		}
	}
	return out
}

// storedRollups reads a series' stored rollups of the units, by start
// (Unix nanos).
func (r *unitsRead) storedRollups(ctx context.Context, series string, homes []homeSpan) (map[int64]storage.Item, error) {
	stored := map[int64]storage.Item{}
	for _, h := range homes {
		err := scan(ctx, r.db.store, storage.Query{
			Table: h.table, PK: itemenc.RollupKey(r.tenant, r.q.Table, series, r.u.name), Low: itemenc.TimeKey(h.low), High: itemenc.TimeKey(h.high),
		}, func(item storage.Item) {
			if t, ok := itemenc.ParseTimeKey(item.SK); ok && len(item.SK) == itemenc.TimeKeyLen && !t.Before(h.low) && !t.After(h.high) {
				stored[t.UnixNano()] = item
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return stored, nil
}

// valid returns the rollup of a series' unit from its stored item, if it
// has one that covers the current markers and no write may be under way.
func (r *unitsRead) valid(series string, start time.Time, item storage.Item) (*agg.Summary, bool) {
	k := markKey{r.u.name, start.UnixNano(), series}
	if item.Attrs == nil || r.newest[k] >= r.settled || !equalCovered(item.Attrs["covered"], r.markers[k]) {
		return nil, false
	}
	p, err := agg.DecodeRollup(item.Attrs, series)
	if err != nil {
		if !errors.Is(err, agg.ErrOldRollup) {
			r.db.opts.Logger.Warn("unreadable rollup, recomputing", "table", r.db.catalog.home(r.f, start), "pk", item.PK, "sk", item.SK, "err", err)
		}
		return nil, false
	}
	return p, true
}

// store writes the rollups of a series' units computed afresh, naming the
// markers they cover, but not those of units a write may still be
// changing. A failure is logged: the answer is right without them, and
// the next query computes them again.
func (r *unitsRead) store(ctx context.Context, series string, starts []time.Time, fresh []*agg.Summary) {
	byHome := map[string][]storage.Item{}
	homeStart := map[string]time.Time{}
	for i, start := range starts {
		k := markKey{r.u.name, start.UnixNano(), series}
		if r.newest[k] >= r.settled {
			continue
		}
		covered := r.markers[k]
		if covered == nil {
			covered = map[string]any{}
		}
		attrs := fresh[i].Encode()
		attrs["covered"] = covered
		h := r.db.catalog.home(r.f, start)
		if _, ok := homeStart[h]; !ok {
			homeStart[h] = start
		}
		byHome[h] = append(byHome[h], storage.Item{PK: itemenc.RollupKey(r.tenant, r.q.Table, series, r.u.name), SK: itemenc.TimeKey(start), Attrs: attrs})
	}
	for h, items := range byHome {
		if err := r.db.storeRollups(ctx, r.f, homeStart[h], items); err != nil {
			r.db.opts.Logger.Warn("store rollups", "table", h, "err", err)
		}
	}
}

// recompute reads one series' raw events over the stale units, each event
// once, and summarises each unit.
func (db *DB) recompute(ctx context.Context, tenant, table string, layout family.Layout, series string, u rollupUnit, tables []physTable, stale []time.Time) ([]*agg.Summary, error) {
	from, to := stale[0], stale[len(stale)-1].Add(u.d-1)
	idx := make(map[int64]int, len(stale))
	out := make([]*agg.Summary, len(stale))
	for i, s := range stale {
		idx[s.UnixNano()] = i
		out[i] = &agg.Summary{}
	}
	err := db.eachEvent(ctx, sourceSpec{tenant: tenant, q: Query{Table: table, Series: series, From: from, To: to}, layout: layout, tables: tables}, func(ev event.Event) error {
		if i, ok := idx[alignDown(ev.Time, u.d).UnixNano()]; ok {
			out[i].AddAll(ev)
		}
		return nil
	})
	return out, err
}

// storeRollups writes the rollup items of units starting at start into
// their home table, making it if it is missing.
func (db *DB) storeRollups(ctx context.Context, f family.Family, start time.Time, items []storage.Item) error {
	if db.opts.ReadOnly {
		return nil
	}
	t, err := db.catalog.route(ctx, f, start, start)
	if err != nil {
		return err
	}
	if err := db.store.BatchWrite(ctx, t.name, items); err != nil {
		return fmt.Errorf("write rollups to %q: %w", t.name, err)
	}
	return nil
}

// scan calls fn with every item a storage query returns; a missing table
// holds nothing.
func scan(ctx context.Context, store storage.Items, q storage.Query, fn func(storage.Item)) error {
	it := store.Query(ctx, q)
	defer it.Close()
	for it.Next() {
		fn(it.Item())
	}
	if err := it.Err(); err != nil && !errors.Is(err, storage.ErrTableNotFound) {
		return fmt.Errorf("query table %q: %w", q.Table, err)
	}
	return nil
}

// equalCovered reports whether a stored rollup's covered map names
// exactly the current markers.
func equalCovered(stored any, current map[string]any) bool {
	m, ok := stored.(map[string]any)
	if !ok || len(m) != len(current) {
		return false
	}
	for k, v := range current {
		if sv, ok := m[k]; !ok || sv != v {
			return false
		}
	}
	return true
}

// partsToBuckets turns the summaries of query buckets into the answer, in
// time order.
func partsToBuckets(parts map[int64]*agg.Summary, q AggregateQuery) ([]Bucket, error) {
	out := newBuckets(&q)
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		if p := parts[k]; p.Events > 0 {
			if err := out.add(time.Unix(0, k).UTC(), p); err != nil {
				return nil, err
			}
		}
	}
	return out.done(), nil
}
