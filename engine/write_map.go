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

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// maxMapAttempts bounds the conditional writes and reads one millisecond's
// events may take before the write gives up: every failed attempt means
// another writer succeeded, so only heavy contention gets there.
const maxMapAttempts = 200

// mapMillisecondParallelism bounds the milliseconds of one table a write stores
// at once.
const mapMillisecondParallelism = 16

// MaxMapFields is the most fields an event of a map-layout table may
// have: each field is one SET clause and one condition in the append's
// expressions, which DynamoDB caps at 4 KB and 300 operators (an event of
// this many fields, appended alone, fits: mapProblem checks).
const MaxMapFields = 100

// errContention reports a millisecond so contended that its events could
// not be stored within maxMapAttempts.
var errContention = errors.New("timetable: map item too contended, try again")

// mapMillisecond is the events of one write for one millisecond of one
// partition.
type mapMillisecond struct {
	pk     string
	ms     time.Time
	events []itemenc.MapEvent
	extra  map[string]any // item attributes besides the events (the TTL)
}

// mapWriter stores a tableWrite's events in the map layout.
type mapWriter struct {
	store   storage.Items
	table   string
	layout  family.TableLayout
	paths   *pathMemory
	metrics *metrics
}

// byMillisecond splits a tableWrite's items into milliseconds of
// partitions, in the order they first appear.
func byMillisecond(items []storage.Item) []*mapMillisecond {
	type key struct {
		pk string
		ms int64
	}
	byKey := map[key]*mapMillisecond{}
	var order []*mapMillisecond
	for i, it := range items {
		t, id, err := itemenc.ParseSortKey(it.SK)
		if err != nil {
			continue // items come from prepare: always row keys
		}
		ms := itemenc.Millisecond(t)
		k := key{it.PK, ms.UnixNano()}
		g := byKey[k]
		if g == nil {
			g = &mapMillisecond{pk: it.PK, ms: ms}
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
		g.events = append(g.events, itemenc.MapEvent{Index: i, ID: id, Nanos: t.Sub(ms).Nanoseconds(), Fields: fields})
	}
	return order
}

// write stores the items, each event once, and returns a
// *storage.BatchWriteError listing the items not stored when it fails.
func (mw *mapWriter) write(ctx context.Context, items []storage.Item) error {
	milliseconds := byMillisecond(items)
	var lost failures
	var g errgroup.Group
	g.SetLimit(mapMillisecondParallelism)
	for _, ms := range milliseconds {
		g.Go(func() error {
			left, err := mw.writeMillisecond(ctx, ms)
			if err != nil {
				idx := make([]int, len(left))
				for i, e := range left {
					idx[i] = e.Index
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

// writeMillisecond stores one millisecond's events in its item and continuation
// items, and returns the events left unwritten when it fails. See the
// package documentation for the rules that make it idempotent.
//
// It starts blind, with a conditional create or (where the millisecond's
// item probably exists) an append; a condition that fails makes it try
// the other, then read the item and act on what it holds (known), which
// may close a full item and move on to the next continuation item.
func (mw *mapWriter) writeMillisecond(ctx context.Context, g *mapMillisecond) ([]itemenc.MapEvent, error) {
	w := &millisecondWrite{mw: mw, g: g, todo: g.events, next: tryCreate, existed: -1}
	if mw.paths.appendFirst(g.pk, g.ms, mw.layout.WritePath) {
		w.next = tryAppend
	}
	defer func() { mw.paths.record(g.pk, g.ms, w.existed) }()
	for attempt := 0; len(w.todo) > 0; attempt++ {
		if attempt == maxMapAttempts {
			return w.todo, fmt.Errorf("%w: %d attempts at item %q/%q", errContention, attempt, g.pk, w.sk())
		}
		var err error
		switch w.next {
		case readItem:
			err = w.read(ctx)
		case tryCreate:
			err = w.create(ctx)
		case tryAppend:
			w.triedAppend = true
			n, u := mw.fit(g, w.sk(), w.todo, nil)
			err = w.send(ctx, "append", n, u)
		case known:
			err = w.act(ctx)
		}
		if err != nil {
			return w.todo, err
		}
	}
	return nil, nil
}

// millisecondWrite is the state of one writeMillisecond.
type millisecondWrite struct {
	mw   *mapWriter
	g    *mapMillisecond
	todo []itemenc.MapEvent // the events not yet known to be stored
	seq  int                // the item written to: 0, then continuation items
	next step
	// triedCreate and triedAppend say which blind writes of the current
	// item failed their condition already.
	triedCreate, triedAppend bool
	// existed is what the first item's state taught the auto path: 1 when
	// it existed before this write, 0 when this write made it, -1 unknown.
	existed int
	st      itemenc.MapItemState // the item's state, as read or predicted
}

// sk is the sort key of the item written to.
func (w *millisecondWrite) sk() string { return itemenc.MapSortKey(w.g.ms, w.seq) }

// read reads the item; its state decides what comes next.
func (w *millisecondWrite) read(ctx context.Context) error {
	it, err := w.mw.store.GetItem(ctx, w.mw.table, w.g.pk, w.sk())
	w.mw.metrics.observeMap("read", err)
	switch {
	case errors.Is(err, storage.ErrItemNotFound):
		w.st = itemenc.MapItemState{Fresh: true}
	case err != nil:
		return err
	default:
		w.st = itemenc.MapStateOf(it)
	}
	w.next = known
	return nil
}

// create sends a conditional create of the item with the events that fit.
func (w *millisecondWrite) create(ctx context.Context) error {
	n, u := w.mw.fitNew(w.g, w.sk(), w.todo)
	if n == 0 {
		return fmt.Errorf("event %q does not fit in a new map item", w.todo[0].ID)
	}
	w.triedCreate = true
	return w.send(ctx, "create", n, u)
}

// act writes what the known state of the item calls for: nothing for
// events it holds already, an append of those that fit, or, when none
// fits, closing the item and moving on to the next.
func (w *millisecondWrite) act(ctx context.Context) error {
	if !w.st.Exists {
		w.next = tryCreate
		w.triedAppend = true // the read showed there is nothing to append to
		return nil
	}
	w.todo = slices.DeleteFunc(w.todo, func(e itemenc.MapEvent) bool { _, ok := w.st.IDs[e.ID]; return ok })
	if len(w.todo) == 0 {
		return nil
	}
	if n, u := w.mw.fit(w.g, w.sk(), w.todo, &w.st); n > 0 {
		return w.send(ctx, "append", n, u)
	}
	if !w.st.Fresh {
		// Only a read proves the item lacks these events.
		w.next = readItem
		return nil
	}
	if w.st.Size <= storage.MaxItemSize && w.st.Count < w.mw.layout.EventsPerItem {
		// Full by size for these events: close the item first, unless
		// one of them got in meanwhile, so that none can land in it once
		// this writer moves on.
		err := w.mw.store.Update(ctx, w.mw.closeItem(w.g, w.sk(), w.st))
		w.mw.metrics.observeMap("close", err)
		if errors.Is(err, storage.ErrConditionFailed) {
			w.next = readItem
			return nil
		}
		if err != nil {
			return err
		}
	}
	w.seq++
	w.next, w.triedCreate, w.triedAppend = tryCreate, false, false
	return nil
}

// send applies u, which writes the first n events of todo. On success
// they are done and the item's state is predicted; when its condition
// fails, the other blind write is tried, then a read.
func (w *millisecondWrite) send(ctx context.Context, kind string, n int, u storage.Update) error {
	err := w.mw.store.Update(ctx, u)
	w.mw.metrics.observeMap(kind, err)
	first := w.next == tryCreate && w.seq == 0 && w.existed < 0
	switch {
	case err == nil:
		if first {
			w.existed = 0
		}
		w.st = predict(w.st, w.todo[:n])
		w.todo = w.todo[n:]
		w.next = known
		return nil
	case !errors.Is(err, storage.ErrConditionFailed):
		return err
	}
	if first {
		w.existed = 1
	}
	switch {
	case w.next == tryCreate && !w.triedAppend:
		w.next = tryAppend
	case w.next == tryAppend && !w.triedCreate:
		w.next = tryCreate
	default:
		w.next = readItem
	}
	return nil
}

// allFields returns the field maps events need, all taken to exist.
func allFields(events []itemenc.MapEvent) map[string]bool {
	have := map[string]bool{itemenc.MapNanos: true}
	for _, e := range events {
		for f := range e.Fields {
			have[f] = true
		}
	}
	return have
}

// predict returns the state of an item after events were appended to
// it.
func predict(st itemenc.MapItemState, events []itemenc.MapEvent) itemenc.MapItemState {
	if !st.Exists {
		st = itemenc.MapItemState{Exists: true, IDs: map[string]struct{}{}, Fields: map[string]bool{}}
	}
	st.Fresh = false
	st.Size += itemenc.AppendCost(events, st.Fields)
	for _, e := range events {
		st.IDs[e.ID] = struct{}{}
		st.Count++
		if e.Nanos != 0 {
			st.Fields[itemenc.MapNanos] = true
		}
		for f := range e.Fields {
			st.Fields[f] = true
		}
	}
	return st
}

// fit returns how many of events, from the first, an append to the item
// sk takes, and the append of them: no more than the item's event cap and size limit allow, and
// only as many as keep the append's expressions within DynamoDB's limits
// (storage.Update.Cost of the update itself). st is what is known of the
// item; nil takes every field map the events need to exist.
func (mw *mapWriter) fit(g *mapMillisecond, sk string, events []itemenc.MapEvent, st *itemenc.MapItemState) (int, storage.Update) {
	known := itemenc.MapItemState{Exists: true, Fields: allFields(events)}
	if st != nil {
		known = *st
	}
	room := mw.layout.EventsPerItem - known.Count
	grow := itemenc.NewGrowth(known.Fields)
	n := 0
	for n < len(events) && n < room {
		grow.Add(events[n])
		if known.Size+grow.Bytes+itemenc.SizeSlack > storage.MaxItemSize {
			break
		}
		n++
	}
	return largestFitting(n, func(n int) storage.Update { return mw.appendTo(g, sk, events[:n], st) })
}

// fitNew returns how many of events, from the first, a new item takes,
// and the create of it.
func (mw *mapWriter) fitNew(g *mapMillisecond, sk string, events []itemenc.MapEvent) (int, storage.Update) {
	base := itemenc.NewMapItemSize(g.pk, sk, g.extra) + len(itemenc.MapSize)
	grow := itemenc.NewGrowth(itemenc.NewMapItemFields())
	n := 0
	for n < len(events) && n < mw.layout.EventsPerItem {
		grow.Add(events[n])
		if base+grow.Bytes+itemenc.SizeSlack > storage.MaxItemSize {
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
func (mw *mapWriter) create(g *mapMillisecond, sk string, events []itemenc.MapEvent) storage.Update {
	it := itemenc.MapItemFor(g.pk, sk, events, g.extra)
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
func (mw *mapWriter) appendTo(g *mapMillisecond, sk string, events []itemenc.MapEvent, st *itemenc.MapItemState) storage.Update {
	have := allFields(events)
	if st != nil {
		have = st.Fields
	}
	cost := itemenc.AppendCost(events, have)
	u := storage.Update{Table: mw.table, PK: g.pk, SK: sk}
	u.Conds = append(u.Conds,
		storage.Exists(storage.PKAttr),
		storage.SizeAtMost(itemenc.MapIDs, mw.layout.EventsPerItem-len(events)),
		storage.AtMost(itemenc.MapSize, json.Number(strconv.Itoa(storage.MaxItemSize-cost-itemenc.SizeSlack))),
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
		ids[i] = e.ID
		u.Conds = append(u.Conds, storage.NotContains(itemenc.MapIDs, e.ID))
		if e.Nanos != 0 {
			put(itemenc.MapNanos, e.ID, itemenc.NanosValue(e.Nanos))
			touched[itemenc.MapNanos] = true
		}
		for f, v := range e.Fields {
			put(f, e.ID, v)
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
		storage.Append(itemenc.MapIDs, ids),
		storage.Add(itemenc.MapSize, json.Number(strconv.Itoa(cost))),
	)
	return u
}

// closeItem returns the update that closes an item to appends, on
// condition that it is as st, just read, found it: it holds no more ids
// than then (ids only grow), so none of the events st showed it lacks.
// One condition, however many events wait.
func (mw *mapWriter) closeItem(g *mapMillisecond, sk string, st itemenc.MapItemState) storage.Update {
	return storage.Update{
		Table:   mw.table,
		PK:      g.pk,
		SK:      sk,
		Conds:   []storage.Cond{storage.Exists(storage.PKAttr), storage.SizeAtMost(itemenc.MapIDs, st.Count)},
		Actions: []storage.Action{storage.Set(itemenc.MapSize, json.Number(strconv.Itoa(itemenc.ClosedSize)))},
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
// should try an append first, by the write-path rule of docs/layouts.md.
func (p *pathMemory) appendFirst(pk string, ms time.Time, path family.WritePath) bool {
	switch path {
	case family.WritePathAppendFirst:
		return true
	case family.WritePathCreateFirst:
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
	g := byMillisecond([]storage.Item{row})
	if len(g) != 1 {
		return ""
	}
	e := g[0].events[0]
	if len(e.Fields) > MaxMapFields {
		return fmt.Sprintf("event has %d fields; the map layout stores at most %d (DynamoDB's 4 KB expression limit): use the row layout for wider events", len(e.Fields), MaxMapFields)
	}
	// Appended alone, to an item with every field map or with none, its
	// update must stay within DynamoDB's expression limits.
	mw := &mapWriter{layout: family.TableLayout{EventsPerItem: family.MaxEventsPerItem}}
	sk := itemenc.MapSortKey(g[0].ms, 0)
	for _, have := range []*itemenc.MapItemState{nil, {Exists: true, Fields: itemenc.NewMapItemFields()}} {
		if err := mw.appendTo(g[0], sk, g[0].events, have).CheckExpressions(); err != nil {
			return fmt.Sprintf("event is too wide for the map layout: %v; use the row layout", err)
		}
	}
	size := itemenc.NewMapItemSize(g[0].pk, sk, g[0].extra) + len(itemenc.MapSize) + itemenc.AppendCost(g[0].events, itemenc.NewMapItemFields())
	// Allow for a sequence number of a few digits, as for a continuation
	// item.
	if size += itemenc.SizeSlack + 3; size > storage.MaxItemSize {
		return fmt.Sprintf("event is %d bytes as a map item, over DynamoDB's limit of %d", size, storage.MaxItemSize)
	}
	return ""
}
