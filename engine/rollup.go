package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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

// markKey names one version marker: a unit, a bucket start (Unix nanos)
// and a series.
type markKey struct {
	unit   string
	start  int64
	series string
}

// rollupsOn reports whether a logical table keeps rollups.
func (db *DB) rollupsOn(table string) bool {
	return db.opts.Rollups || db.opts.Config.Tables[table].Rollups
}

// newNonce returns a random nonce naming one Write call.
func newNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// mark notes the rollup buckets an event item touches.
func (w *tableWrite) mark(series, sk string) {
	t, ok := parseTimeKey(sk[:timeKeyLen])
	if !ok {
		return
	}
	if w.marks == nil {
		w.marks = map[markKey]struct{}{}
	}
	for _, u := range rollupUnits {
		w.marks[markKey{u.name, alignDown(t, u.d).UnixNano(), series}] = struct{}{}
	}
}

// markerItems returns the version markers of a write's marks.
func (w *tableWrite) markerItems(nonce string, at time.Time) []storage.Item {
	out := make([]storage.Item, 0, len(w.marks))
	atNum := json.Number(strconv.FormatInt(at.UnixNano(), 10))
	for k := range w.marks {
		out = append(out, storage.Item{
			PK:    markerKey(w.tenant, w.ltable),
			SK:    markerSortKey(k.unit, time.Unix(0, k.start), k.series),
			Attrs: map[string]any{"n": nonce, "at": atNum},
		})
	}
	slices.SortFunc(out, func(a, b storage.Item) int { return strings.Compare(a.SK, b.SK) })
	return out
}

// rollupUnitFor returns the rollup unit an aggregate query can use: days
// for calendar buckets (weeks, months and quarters are whole UTC days) and
// when the bucket is a whole number of days, hours when of hours.
func (db *DB) rollupUnitFor(q AggregateQuery) (rollupUnit, bool) {
	switch {
	case !db.rollupsOn(q.Table):
		return rollupUnit{}, false
	case q.Calendar.Unit != 0:
		return dayUnit, true
	case q.Bucket%dayUnit.d == 0:
		return dayUnit, true
	case q.Bucket%hourUnit.d == 0:
		return hourUnit, true
	}
	return rollupUnit{}, false
}

// aggregateRollups answers an aggregate query from rollups for the whole
// units inside the range and from raw events for the partial units at its
// edges.
func (db *DB) aggregateRollups(ctx context.Context, tenant string, q AggregateQuery, f family.Family, u rollupUnit) ([]Bucket, error) {
	parts := map[int64]*part{}
	at := func(start time.Time) *part {
		k := q.bucketStart(start).UnixNano()
		p := parts[k]
		if p == nil {
			p = &part{}
			parts[k] = p
		}
		return p
	}
	// One read of the registry serves the whole query.
	all, err := db.catalog.tables(ctx, f, q.From, q.To)
	if err != nil {
		return nil, err
	}
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
		m, err := db.openSources(ctx, tenant, rq, tables, from, to, 0, nil)
		if err != nil {
			return err
		}
		defer m.close()
		for {
			ev, ok, err := m.next()
			if err != nil || !ok {
				return err
			}
			at(ev.Time).add(ev, q.Fields)
		}
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
		err := db.wholeUnits(ctx, tenant, q, f, u, first, end, within(first, end.Add(-1)), func(start time.Time, p *part) {
			at(start).merge(p, q.Fields)
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
func (db *DB) wholeUnits(ctx context.Context, tenant string, q AggregateQuery, f family.Family, u rollupUnit, first, end time.Time, tables []physTable, emit func(time.Time, *part)) error {
	// The markers first, then the rollups and raw events: a write after
	// this point leaves a marker the stored rollup does not cover.
	markers := map[markKey]map[string]any{}
	newest := map[markKey]int64{}
	series := map[string]struct{}{}
	if q.Series != "" {
		series[q.Series] = struct{}{}
	}
	for _, t := range tables {
		if q.Series == "" {
			names, err := listSeries(ctx, db.store, t.name, tenant, q.Table)
			if errors.Is(err, storage.ErrTableNotFound) {
				db.forgetTable(t)
				continue
			}
			if err != nil {
				return err
			}
			for _, s := range names {
				series[s] = struct{}{}
			}
		}
		err := scan(ctx, db.store, storage.Query{
			Table: t.name, PK: markerKey(tenant, q.Table),
			Low: u.name + "#" + timeKey(first), High: u.name + "#" + timeKey(end),
		}, func(item storage.Item) {
			unit, start, s, ok := parseMarkerSortKey(item.SK)
			if !ok || unit != u.name || (q.Series != "" && s != q.Series) {
				return
			}
			series[s] = struct{}{}
			k := markKey{unit, start.UnixNano(), s}
			if markers[k] == nil {
				markers[k] = map[string]any{}
			}
			markers[k][t.name] = item.Attrs["n"]
			if n, ok := item.Attrs["at"].(json.Number); ok {
				if v, err := strconv.ParseInt(string(n), 10, 64); err == nil && v > newest[k] {
					newest[k] = v
				}
			}
		})
		if err != nil {
			return err
		}
	}

	// Each unit's rollup lives in its home table.
	home := func(start time.Time) string { return db.catalog.home(f, start) }
	type span struct{ low, high time.Time }
	homes := map[string]*span{}
	var homeOrder []string
	for s := first; s.Before(end); s = s.Add(u.d) {
		h := home(s)
		if sp := homes[h]; sp != nil {
			sp.high = s
		} else {
			homes[h] = &span{s, s}
			homeOrder = append(homeOrder, h)
		}
	}
	settled := db.opts.Clock.Now().Add(-db.opts.RollupSettle).UnixNano()
	for _, s := range slices.Sorted(maps.Keys(series)) {
		stored := map[int64]storage.Item{}
		for _, h := range homeOrder {
			sp := homes[h]
			err := scan(ctx, db.store, storage.Query{
				Table: h, PK: rollupKey(tenant, q.Table, s, u.name), Low: timeKey(sp.low), High: timeKey(sp.high),
			}, func(item storage.Item) {
				if t, ok := parseTimeKey(item.SK); ok && len(item.SK) == timeKeyLen && home(t) == h {
					stored[t.UnixNano()] = item
				}
			})
			if err != nil {
				return err
			}
		}
		var stale []time.Time
		for start := first; start.Before(end); start = start.Add(u.d) {
			k := markKey{u.name, start.UnixNano(), s}
			item, ok := stored[k.start]
			if ok && newest[k] < settled && equalCovered(item.Attrs["covered"], markers[k]) {
				p, err := decodePart(item.Attrs, s)
				if err == nil {
					emit(start, p)
					continue
				}
				if !errors.Is(err, errOldRollup) {
					db.opts.Logger.Warn("unreadable rollup, recomputing", "table", home(start), "pk", item.PK, "sk", item.SK, "err", err)
				}
			}
			stale = append(stale, start)
		}
		if len(stale) == 0 {
			continue
		}
		fresh, err := db.recompute(ctx, tenant, q.Table, s, u, tables, stale)
		if err != nil {
			return err
		}
		byHome := map[string][]storage.Item{}
		homeStart := map[string]time.Time{}
		for i, start := range stale {
			emit(start, fresh[i])
			k := markKey{u.name, start.UnixNano(), s}
			if newest[k] >= settled {
				continue // a write may still be under way
			}
			covered := markers[k]
			if covered == nil {
				covered = map[string]any{}
			}
			attrs := fresh[i].encode()
			attrs["covered"] = covered
			h := home(start)
			if _, ok := homeStart[h]; !ok {
				homeStart[h] = start
			}
			byHome[h] = append(byHome[h], storage.Item{PK: rollupKey(tenant, q.Table, s, u.name), SK: timeKey(start), Attrs: attrs})
		}
		for h, items := range byHome {
			if err := db.storeRollups(ctx, f, homeStart[h], items); err != nil {
				// The answer is right without them; the next query
				// computes them again.
				db.opts.Logger.Warn("store rollups", "table", h, "err", err)
			}
		}
	}
	return nil
}

// recompute reads one series' raw events over the stale units, each event
// once, and summarises each unit.
func (db *DB) recompute(ctx context.Context, tenant, table, series string, u rollupUnit, tables []physTable, stale []time.Time) ([]*part, error) {
	from, to := stale[0], stale[len(stale)-1].Add(u.d-1)
	idx := make(map[int64]int, len(stale))
	out := make([]*part, len(stale))
	for i, s := range stale {
		idx[s.UnixNano()] = i
		out[i] = &part{}
	}
	m, err := db.openSources(ctx, tenant, Query{Table: table, Series: series, From: from, To: to}, tables, from, to, 0, nil)
	if err != nil {
		return nil, err
	}
	defer m.close()
	for {
		ev, ok, err := m.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		if i, ok := idx[alignDown(ev.Time, u.d).UnixNano()]; ok {
			out[i].addAll(ev)
		}
	}
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

// rollupFormat is the format of the rollup items this version writes, in
// their attribute "v": 2 since sums are exact decimals. A rollup of
// another format is stale, and computed again from raw events.
const rollupFormat = "2"

// encode returns a rollup item's attributes, but covered. A sum is the
// exact decimal as a string, since it may have more digits than a
// DynamoDB number holds; minimums and maximums are values of events, and
// numbers.
func (p *part) encode() map[string]any {
	fields := make(map[string]any, len(p.fields))
	for name, fp := range p.fields {
		m := map[string]any{
			"count": json.Number(strconv.FormatInt(fp.count, 10)),
			"first": fp.first, "first_t": fp.firstK.sortKey(),
			"last": fp.last, "last_t": fp.lastK.sortKey(),
		}
		if fp.nonnum {
			m["nonnum"] = true
		} else {
			m["sum"] = string(decimalNumber(&fp.sum))
			m["min"], m["max"] = decimalNumber(&fp.min), decimalNumber(&fp.max)
		}
		fields[name] = m
	}
	return map[string]any{
		"v":      json.Number(rollupFormat),
		"events": json.Number(strconv.FormatInt(p.events, 10)),
		"fields": fields,
	}
}

var (
	errBadRollup = errors.New("timetable: malformed rollup")
	errOldRollup = errors.New("timetable: rollup of an earlier format")
)

// decodePart reads a series' rollup item.
func decodePart(attrs map[string]any, series string) (*part, error) {
	if v, _ := attrs["v"].(json.Number); v != rollupFormat {
		return nil, errOldRollup
	}
	count := func(v any) (int64, error) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, errBadRollup
		}
		return strconv.ParseInt(string(n), 10, 64)
	}
	events, err := count(attrs["events"])
	if err != nil {
		return nil, errBadRollup
	}
	fields, ok := attrs["fields"].(map[string]any)
	if !ok {
		return nil, errBadRollup
	}
	p := &part{events: events}
	for name, v := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errBadRollup
		}
		fp := p.field(name)
		n, err := count(m["count"])
		ft, _ := m["first_t"].(string)
		lt, _ := m["last_t"].(string)
		firstK, ok1 := orderKeyOf(ft, series)
		lastK, ok2 := orderKeyOf(lt, series)
		if err != nil || n <= 0 || !ok1 || !ok2 {
			return nil, errBadRollup
		}
		fp.count = n
		fp.first, fp.firstK = m["first"], firstK
		fp.last, fp.lastK = m["last"], lastK
		if m["nonnum"] == true {
			fp.nonnum = true
			continue
		}
		sum, ok := m["sum"].(string)
		if !ok || !parseDecimal(&fp.sum, sum) || !decimalOf(&fp.min, m["min"]) || !decimalOf(&fp.max, m["max"]) {
			return nil, errBadRollup
		}
	}
	return p, nil
}

// partsToBuckets turns the parts of query buckets into the answer, in
// time order.
func partsToBuckets(parts map[int64]*part, q AggregateQuery) ([]Bucket, error) {
	out := newBuckets(&q)
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		if p := parts[k]; p.events > 0 {
			if err := out.add(time.Unix(0, k).UTC(), p); err != nil {
				return nil, err
			}
		}
	}
	return out.done(), nil
}
