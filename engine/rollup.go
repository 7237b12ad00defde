package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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

// markerKey returns the partition key of a logical table's version
// markers in a physical table: "#~" ends it, where data partitions end in
// "#<digits>" and the series index has a single "#".
func markerKey(tenant, table string) string { return tenant + "#" + table + "#~v" }

// markerSortKey returns the sort key of a version marker.
func markerSortKey(unit string, start time.Time, series string) string {
	return unit + "#" + timeKey(start) + "#" + series
}

// parseMarkerSortKey splits a version marker's sort key.
func parseMarkerSortKey(sk string) (unit string, start time.Time, series string, ok bool) {
	unit, rest, found := strings.Cut(sk, "#")
	if !found || len(rest) < timeKeyLen+1 || rest[timeKeyLen] != '#' {
		return "", time.Time{}, "", false
	}
	start, ok = parseTimeKey(rest[:timeKeyLen])
	return unit, start, rest[timeKeyLen+1:], ok
}

// rollupKey returns the partition key of a series' rollups of one unit.
func rollupKey(tenant, table, series, unit string) string {
	return tenant + "#" + table + "#" + series + "#~r" + unit
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
// when the bucket is a whole number of days, hours when of hours.
func (db *DB) rollupUnitFor(q AggregateQuery) (rollupUnit, bool) {
	switch {
	case !db.rollupsOn(q.Table):
		return rollupUnit{}, false
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
		k := alignDown(start, q.Bucket).UnixNano()
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
				db.opts.Logger.Warn("unreadable rollup, recomputing", "table", home(start), "pk", item.PK, "sk", item.SK, "err", err)
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
			out[i].add(ev, nil)
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
func scan(ctx context.Context, store storage.Store, q storage.Query, fn func(storage.Item)) error {
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

// part summarises events in a way that merges: a rollup, or the part of a
// query bucket read so far.
type part struct {
	events int64
	fields map[string]*fieldPart
}

// fieldPart summarises one field. Keys order events as the merge does: by
// sort key (time, id), then series.
type fieldPart struct {
	count         int64
	sum, min, max float64
	nonnum        bool
	first, last   any
	firstK, lastK orderKey
}

type orderKey struct{ sk, series string }

func (a orderKey) less(b orderKey) bool {
	if a.sk != b.sk {
		return a.sk < b.sk
	}
	return a.series < b.series
}

func (p *part) field(name string) *fieldPart {
	if p.fields == nil {
		p.fields = map[string]*fieldPart{}
	}
	fp := p.fields[name]
	if fp == nil {
		fp = &fieldPart{min: math.Inf(1), max: math.Inf(-1)}
		p.fields[name] = fp
	}
	return fp
}

// add adds an event; fields nil means all of its fields.
func (p *part) add(ev event.Event, fields []string) {
	p.events++
	k := orderKey{sortKey(ev.Time, ev.ID), ev.Series}
	addOne := func(name string, v any) {
		fp := p.field(name)
		if fp.count == 0 || k.less(fp.firstK) {
			fp.first, fp.firstK = v, k
		}
		if fp.count == 0 || fp.lastK.less(k) {
			fp.last, fp.lastK = v, k
		}
		fp.count++
		n, ok := v.(json.Number)
		x, err := strconv.ParseFloat(string(n), 64)
		if !ok || err != nil {
			fp.nonnum = true
			return
		}
		fp.sum += x
		fp.min, fp.max = math.Min(fp.min, x), math.Max(fp.max, x)
	}
	if fields == nil {
		for name, v := range ev.Fields {
			addOne(name, v)
		}
		return
	}
	for _, name := range fields {
		if v, ok := ev.Fields[name]; ok {
			addOne(name, v)
		}
	}
}

// merge adds o's summary of the named fields.
func (p *part) merge(o *part, fields []string) {
	p.events += o.events
	for _, name := range fields {
		of := o.fields[name]
		if of == nil || of.count == 0 {
			continue
		}
		fp := p.field(name)
		if fp.count == 0 || of.firstK.less(fp.firstK) {
			fp.first, fp.firstK = of.first, of.firstK
		}
		if fp.count == 0 || fp.lastK.less(of.lastK) {
			fp.last, fp.lastK = of.last, of.lastK
		}
		fp.count += of.count
		fp.nonnum = fp.nonnum || of.nonnum
		fp.sum += of.sum
		fp.min, fp.max = math.Min(fp.min, of.min), math.Max(fp.max, of.max)
	}
}

func formatFloat(x float64) json.Number { return json.Number(strconv.FormatFloat(x, 'g', -1, 64)) }

// encode returns a rollup item's attributes, but covered.
func (p *part) encode() map[string]any {
	fields := make(map[string]any, len(p.fields))
	for name, fp := range p.fields {
		m := map[string]any{
			"count": json.Number(strconv.FormatInt(fp.count, 10)),
			"first": fp.first, "first_t": fp.firstK.sk,
			"last": fp.last, "last_t": fp.lastK.sk,
		}
		if fp.nonnum {
			m["nonnum"] = true
		} else {
			m["sum"], m["min"], m["max"] = formatFloat(fp.sum), formatFloat(fp.min), formatFloat(fp.max)
		}
		fields[name] = m
	}
	return map[string]any{"events": json.Number(strconv.FormatInt(p.events, 10)), "fields": fields}
}

var errBadRollup = errors.New("timetable: malformed rollup")

// decodePart reads a series' rollup item.
func decodePart(attrs map[string]any, series string) (*part, error) {
	num := func(v any) (float64, error) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, errBadRollup
		}
		return strconv.ParseFloat(string(n), 64)
	}
	events, err := num(attrs["events"])
	if err != nil {
		return nil, errBadRollup
	}
	fields, ok := attrs["fields"].(map[string]any)
	if !ok {
		return nil, errBadRollup
	}
	p := &part{events: int64(events)}
	for name, v := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errBadRollup
		}
		fp := p.field(name)
		count, err := num(m["count"])
		ft, ok1 := m["first_t"].(string)
		lt, ok2 := m["last_t"].(string)
		if err != nil || !ok1 || !ok2 {
			return nil, errBadRollup
		}
		fp.count = int64(count)
		fp.first, fp.firstK = m["first"], orderKey{ft, series}
		fp.last, fp.lastK = m["last"], orderKey{lt, series}
		if m["nonnum"] == true {
			fp.nonnum = true
			continue
		}
		if fp.sum, err = num(m["sum"]); err != nil {
			return nil, errBadRollup
		}
		if fp.min, err = num(m["min"]); err != nil {
			return nil, errBadRollup
		}
		if fp.max, err = num(m["max"]); err != nil {
			return nil, errBadRollup
		}
	}
	return p, nil
}

// partsToBuckets turns the parts of query buckets into the answer, in
// time order.
func partsToBuckets(parts map[int64]*part, q AggregateQuery) ([]Bucket, error) {
	numeric := slices.ContainsFunc(q.Funcs, func(fn string) bool {
		return fn == FnSum || fn == FnMin || fn == FnMax || fn == FnAvg
	})
	var out []Bucket
	next := alignDown(q.From, q.Bucket)
	fill := func(until time.Time) {
		for ; q.Fill && next.Before(until); next = next.Add(q.Bucket) {
			out = append(out, q.bucketAt(next))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		p := parts[k]
		if p.events == 0 {
			continue
		}
		start := time.Unix(0, k).UTC()
		fill(start)
		b := q.bucketAt(start)
		b.Events = p.events
		for _, name := range q.Fields {
			fp := p.fields[name]
			if fp == nil || fp.count == 0 {
				continue
			}
			if numeric && fp.nonnum {
				return nil, fmt.Errorf("%w: field %q holds a value that is not a number in the bucket starting %s: sum, min, max and avg need numbers",
					ErrBadQuery, name, start.Format(time.RFC3339))
			}
			r := map[string]any{}
			for _, fn := range q.Funcs {
				switch fn {
				case FnCount:
					r[fn] = fp.count
				case FnSum:
					r[fn] = fp.sum
				case FnMin:
					r[fn] = fp.min
				case FnMax:
					r[fn] = fp.max
				case FnAvg:
					r[fn] = fp.sum / float64(fp.count)
				case FnFirst:
					r[fn] = fp.first
				case FnLast:
					r[fn] = fp.last
				}
			}
			b.Values[name] = r
		}
		out = append(out, b)
		next = start.Add(q.Bucket)
	}
	if q.Fill {
		fill(alignDown(q.To, q.Bucket).Add(1))
	}
	return out, nil
}
