package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/storage"
)

// maxMapAttempts bounds the conditional writes and reads one millisecond's
// events may take before the write gives up: every failed attempt means
// another writer succeeded, so only heavy contention gets there.
const maxMapAttempts = 200

// mapGroupParallelism bounds the milliseconds of one table a write stores
// at once.
const mapGroupParallelism = 16

// MaxMapFields is the most fields an event of a map-layout table may
// have: each field is one SET clause and one condition in the append's
// expressions, which DynamoDB caps at 4 KB and 300 operators (an event of
// this many fields, appended alone, fits: mapProblem checks).
const MaxMapFields = 100

// errContention reports a millisecond so contended that its events could
// not be stored within maxMapAttempts.
var errContention = errors.New("timetable: map item too contended, try again")

// mapGroup is the events of one write for one millisecond of one
// partition.
type mapGroup struct {
	pk     string
	ms     time.Time
	events []mapEvent
	extra  map[string]any // item attributes besides the events (the TTL)
}

// mapWriter stores a tableWrite's events in the map layout.
type mapWriter struct {
	store   storage.Items
	table   string
	layout  config.TableLayout
	paths   *pathMemory
	metrics *metrics
}

// groupMapEvents splits a tableWrite's items into milliseconds of
// partitions, in the order they first appear.
func groupMapEvents(items []storage.Item) []*mapGroup {
	type key struct {
		pk string
		ms int64
	}
	byKey := map[key]*mapGroup{}
	var order []*mapGroup
	for i, it := range items {
		t, id, err := parseSortKey(it.SK)
		if err != nil {
			continue // items come from prepare: always row keys
		}
		ms := millisecond(t)
		k := key{it.PK, ms.UnixNano()}
		g := byKey[k]
		if g == nil {
			g = &mapGroup{pk: it.PK, ms: ms}
			byKey[k] = g
			order = append(order, g)
		}
		fields := make(map[string]any, len(it.Attrs))
		for name, v := range it.Attrs {
			if strings.HasPrefix(name, "tt_") {
				if g.extra == nil {
					g.extra = map[string]any{}
				}
				g.extra[name] = v // the TTL: the same for a whole millisecond
				continue
			}
			fields[name] = v
		}
		g.events = append(g.events, mapEvent{idx: i, id: id, nanos: t.Sub(ms).Nanoseconds(), fields: fields})
	}
	return order
}

// write stores the items, each event once, and returns a
// *storage.BatchWriteError listing the items not stored when it fails.
func (mw *mapWriter) write(ctx context.Context, items []storage.Item) error {
	groups := groupMapEvents(items)
	var lost failures
	var g errgroup.Group
	g.SetLimit(mapGroupParallelism)
	for _, grp := range groups {
		g.Go(func() error {
			left, err := mw.writeGroup(ctx, grp)
			if err != nil {
				idx := make([]int, len(left))
				for i, e := range left {
					idx[i] = e.idx
				}
				lost.add(err, idx...)
			}
			return nil // the other milliseconds are still written
		})
	}
	_ = g.Wait()
	if unwritten, err := lost.result(); err != nil {
		return &storage.BatchWriteError{Table: mw.table, Unwritten: unwritten, Err: err}
	}
	return nil
}

// A step is what the write of a millisecond tries next.
type step int

const (
	tryCreate step = iota // a conditional create, blind
	tryAppend             // an append assuming every field map exists, blind
	readItem              // read the item, then act on what it holds
	known                 // act on the state read
)

// writeGroup stores one millisecond's events in its item and continuation
// items, and returns the events left unwritten when it fails. See the
// package documentation for the rules that make it idempotent.
func (mw *mapWriter) writeGroup(ctx context.Context, g *mapGroup) ([]mapEvent, error) {
	todo := g.events
	seq := 0
	next := tryCreate
	if mw.paths.appendFirst(g.pk, g.ms, mw.layout.WritePath) {
		next = tryAppend
	}
	var triedCreate, triedAppend bool
	// existed is what the first item's state taught the auto path: 1 when
	// it existed before this write, 0 when this write made it.
	existed := -1
	defer func() { mw.paths.record(g.pk, g.ms, existed) }()
	var st mapItemState
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == maxMapAttempts {
			return todo, fmt.Errorf("%w: %d attempts at item %q/%q", errContention, attempt, g.pk, mapSortKey(g.ms, seq))
		}
		sk := mapSortKey(g.ms, seq)
		var u storage.Update
		var n int
		kind := "append"
		switch next {
		case readItem:
			it, err := mw.store.GetItem(ctx, mw.table, g.pk, sk)
			mw.metrics.observeMap("read", err)
			switch {
			case errors.Is(err, storage.ErrItemNotFound):
				st = mapItemState{fresh: true}
			case err != nil:
				return todo, err
			default:
				st = stateOf(it)
			}
			next = known
			continue
		case tryCreate:
			if n, u = mw.fitNew(g, sk, todo); n == 0 {
				return todo, fmt.Errorf("event %q does not fit in a new map item", todo[0].id)
			}
			kind = "create"
			triedCreate = true
		case tryAppend:
			n, u = mw.fit(g, sk, todo, nil)
			triedAppend = true
		case known:
			if !st.exists {
				next = tryCreate
				triedAppend = true // the read showed there is nothing to append to
				continue
			}
			todo = slices.DeleteFunc(todo, func(e mapEvent) bool { _, ok := st.ids[e.id]; return ok })
			if len(todo) == 0 {
				return nil, nil
			}
			if n, u = mw.fit(g, sk, todo, &st); n > 0 {
				break
			}
			if !st.fresh {
				// Only a read proves the item lacks these events.
				next = readItem
				continue
			}
			if st.size <= storage.MaxItemSize && st.count < mw.layout.EventsPerItem {
				// Full by size for these events: close the item first,
				// unless one of them got in meanwhile, so that none can
				// land in it once this writer moves on.
				err := mw.store.Update(ctx, mw.closeItem(g, sk, st))
				mw.metrics.observeMap("close", err)
				if errors.Is(err, storage.ErrConditionFailed) {
					next = readItem
					continue
				}
				if err != nil {
					return todo, err
				}
			}
			seq++
			next, triedCreate, triedAppend = tryCreate, false, false
			continue
		}
		err := mw.store.Update(ctx, u)
		mw.metrics.observeMap(kind, err)
		if err == nil {
			if next == tryCreate && seq == 0 && existed < 0 {
				existed = 0
			}
			st = predict(st, todo[:n])
			todo = todo[n:]
			next = known
			continue
		}
		if !errors.Is(err, storage.ErrConditionFailed) {
			return todo, err
		}
		if next == tryCreate && seq == 0 && existed < 0 {
			existed = 1
		}
		switch {
		case next == tryCreate && !triedAppend:
			next = tryAppend
		case next == tryAppend && !triedCreate:
			next = tryCreate
		default:
			next = readItem
		}
	}
	return nil, nil
}

// allFields returns the field maps events need, all taken to exist.
func allFields(events []mapEvent) map[string]bool {
	have := map[string]bool{mapNanos: true}
	for _, e := range events {
		for f := range e.fields {
			have[f] = true
		}
	}
	return have
}

// predict returns the state of an item after events were appended to
// it.
func predict(st mapItemState, events []mapEvent) mapItemState {
	if !st.exists {
		st = mapItemState{exists: true, ids: map[string]struct{}{}, fields: map[string]bool{}}
	}
	st.fresh = false
	st.size += appendCost(events, st.fields)
	for _, e := range events {
		st.ids[e.id] = struct{}{}
		st.count++
		if e.nanos != 0 {
			st.fields[mapNanos] = true
		}
		for f := range e.fields {
			st.fields[f] = true
		}
	}
	return st
}

// fit returns how many of events, from the first, an append to the item
// sk takes, and the append of them: no more than the item's event cap and size limit allow, and
// only as many as keep the append's expressions within DynamoDB's limits
// (storage.Update.Cost of the update itself). st is what is known of the
// item; nil takes every field map the events need to exist.
func (mw *mapWriter) fit(g *mapGroup, sk string, events []mapEvent, st *mapItemState) (int, storage.Update) {
	known := mapItemState{exists: true, fields: allFields(events)}
	if st != nil {
		known = *st
	}
	room := mw.layout.EventsPerItem - known.count
	grow := newGrowth(known.fields)
	n := 0
	for n < len(events) && n < room {
		grow.add(events[n])
		if known.size+grow.bytes+sizeSlack > storage.MaxItemSize {
			break
		}
		n++
	}
	return largestFitting(n, func(n int) storage.Update { return mw.appendTo(g, sk, events[:n], st) })
}

// fitNew returns how many of events, from the first, a new item takes,
// and the create of it.
func (mw *mapWriter) fitNew(g *mapGroup, sk string, events []mapEvent) (int, storage.Update) {
	base := newItemSize(g.pk, sk, g.extra) + len(mapSize)
	grow := newGrowth(newItemFields())
	n := 0
	for n < len(events) && n < mw.layout.EventsPerItem {
		grow.add(events[n])
		if base+grow.bytes+sizeSlack > storage.MaxItemSize {
			break
		}
		n++
	}
	return largestFitting(n, func(n int) storage.Update { return mw.create(g, sk, events[:n]) })
}

// largestFitting returns the largest count up to n whose update, as
// build makes it, keeps its expressions within DynamoDB's limits, and that
// update. An update's cost grows with its events, so a binary search finds
// it; the usual case, all n fit, builds the update once.
func largestFitting(n int, build func(n int) storage.Update) (int, storage.Update) {
	u := build(n)
	if u.Cost().Fits() {
		return n, u
	}
	lo, hi := 0, n // build(lo) fits or lo is 0; build(hi) does not
	var fits storage.Update
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if u := build(mid); u.Cost().Fits() {
			lo, fits = mid, u
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		fits = build(0)
	}
	return lo, fits
}

// create returns the conditional create of a new item holding events.
func (mw *mapWriter) create(g *mapGroup, sk string, events []mapEvent) storage.Update {
	it := mapItemFor(g.pk, sk, events, g.extra)
	u := storage.Update{Table: mw.table, PK: g.pk, SK: sk, Conds: []storage.Cond{storage.NotExists(storage.PKAttr)}}
	for name, v := range it.Attrs {
		u.Actions = append(u.Actions, storage.Set(name, v))
	}
	return u
}

// appendTo returns the append of events to an existing item: it lists
// their ids and adds them to the field maps, on condition that the item
// holds none of them, has room for them, and has exactly the field maps
// the update expects (have; nil expects every one to exist).
func (mw *mapWriter) appendTo(g *mapGroup, sk string, events []mapEvent, st *mapItemState) storage.Update {
	have := allFields(events)
	if st != nil {
		have = st.fields
	}
	cost := appendCost(events, have)
	u := storage.Update{Table: mw.table, PK: g.pk, SK: sk}
	u.Conds = append(u.Conds,
		storage.Exists(storage.PKAttr),
		storage.SizeAtMost(mapIDs, mw.layout.EventsPerItem-len(events)),
		storage.AtMost(mapSize, json.Number(strconv.Itoa(storage.MaxItemSize-cost-sizeSlack))),
	)
	ids := make([]any, len(events))
	newMaps := map[string]map[string]any{}
	var order []string
	put := func(f, id string, v any) {
		if have[f] {
			u.Actions = append(u.Actions, storage.SetKey(f, id, v))
			return
		}
		m := newMaps[f]
		if m == nil {
			m = map[string]any{}
			newMaps[f] = m
			order = append(order, f)
		}
		m[id] = v
	}
	touched := map[string]bool{}
	for i, e := range events {
		ids[i] = e.id
		u.Conds = append(u.Conds, storage.NotContains(mapIDs, e.id))
		if e.nanos != 0 {
			put(mapNanos, e.id, nanosValue(e.nanos))
			touched[mapNanos] = true
		}
		for f, v := range e.fields {
			put(f, e.id, v)
			touched[f] = true
		}
	}
	for f := range touched {
		if have[f] {
			u.Conds = append(u.Conds, storage.Exists(f))
		} else {
			u.Conds = append(u.Conds, storage.NotExists(f))
		}
	}
	for _, f := range order {
		m := newMaps[f]
		u.Actions = append(u.Actions, storage.Set(f, map[string]any(m)))
	}
	u.Actions = append(u.Actions,
		storage.Append(mapIDs, ids),
		storage.Add(mapSize, json.Number(strconv.Itoa(cost))),
	)
	return u
}

// closeItem returns the update that closes an item to appends, on
// condition that it is as st, just read, found it: it holds no more ids
// than then (ids only grow), so none of the events st showed it lacks.
// One condition, however many events wait.
func (mw *mapWriter) closeItem(g *mapGroup, sk string, st mapItemState) storage.Update {
	return storage.Update{
		Table:   mw.table,
		PK:      g.pk,
		SK:      sk,
		Conds:   []storage.Cond{storage.Exists(storage.PKAttr), storage.SizeAtMost(mapIDs, st.count)},
		Actions: []storage.Action{storage.Set(mapSize, json.Number(strconv.Itoa(closedSize)))},
	}
}

// pathMemory remembers, per partition, what the auto write path needs:
// the last millisecond this engine wrote, and whether the last create of
// a millisecond's first item found it made by another writer.
type pathMemory struct {
	mu   sync.Mutex
	last map[string]pathState
}

type pathState struct {
	ms       int64
	collided bool
}

// maxPathMemory bounds the partitions pathMemory remembers; past it, it
// starts over.
const maxPathMemory = 1 << 16

func newPathMemory() *pathMemory { return &pathMemory{last: map[string]pathState{}} }

// appendFirst reports whether a write of millisecond ms of partition pk
// should try an append first. The auto rule: append first when this
// engine wrote that very millisecond last (its item exists), or when the
// last create of a new millisecond collided with another writer's;
// create first otherwise.
func (p *pathMemory) appendFirst(pk string, ms time.Time, path config.WritePath) bool {
	switch path {
	case config.WritePathAppendFirst:
		return true
	case config.WritePathCreateFirst:
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.last[pk]
	return ok && (s.ms == ms.UnixNano() || s.collided)
}

// record notes that this engine wrote millisecond ms of partition pk,
// and whether the millisecond's first item existed before (1), did not
// (0), or was not learnt (-1, keeping what was known).
func (p *pathMemory) record(pk string, ms time.Time, existed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.last) >= maxPathMemory {
		clear(p.last)
	}
	s, seen := p.last[pk]
	if existed >= 0 && !(seen && s.ms == ms.UnixNano()) {
		// Only a new millisecond says whether other writers make items
		// first: this engine made the one it wrote last.
		s.collided = existed == 1
	}
	s.ms = ms.UnixNano()
	p.last[pk] = s
}

// mapProblem returns why an event, as its row item, cannot be stored in
// the map layout, or "".
func mapProblem(row storage.Item) string {
	g := groupMapEvents([]storage.Item{row})
	if len(g) != 1 {
		return ""
	}
	e := g[0].events[0]
	if len(e.fields) > MaxMapFields {
		return fmt.Sprintf("event has %d fields; the map layout stores at most %d (DynamoDB's 4 KB expression limit): use the row layout for wider events", len(e.fields), MaxMapFields)
	}
	// Appended alone, to an item with every field map or with none, its
	// update must stay within DynamoDB's expression limits.
	mw := &mapWriter{layout: config.TableLayout{EventsPerItem: config.MaxEventsPerItem}}
	sk := mapSortKey(g[0].ms, 0)
	for _, have := range []*mapItemState{nil, {exists: true, fields: newItemFields()}} {
		if err := mw.appendTo(g[0], sk, g[0].events, have).CheckExpressions(); err != nil {
			return fmt.Sprintf("event is too wide for the map layout: %v; use the row layout", err)
		}
	}
	size := newItemSize(g[0].pk, sk, g[0].extra) + len(mapSize) + appendCost(g[0].events, newItemFields())
	// Allow for a sequence number of a few digits, as for a continuation
	// item.
	if size += sizeSlack + 3; size > storage.MaxItemSize {
		return fmt.Sprintf("event is %d bytes as a map item, over DynamoDB's limit of %d", size, storage.MaxItemSize)
	}
	return ""
}
