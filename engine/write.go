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

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// WriteError reports a Write that stored some events but not all, because
// the store failed. Every event not listed is durable; writing the listed
// ones again, or the whole request, is safe and never duplicates.
type WriteError struct {
	// Unwritten holds the indexes of the events not written, ascending.
	Unwritten []int
	// Err is the store's error.
	Err error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%d of the events were not written: %v", len(e.Unwritten), e.Err)
}

// Unwrap returns the store's error.
func (e *WriteError) Unwrap() error { return e.Err }

// pending is an event on its way to a table.
type pending struct {
	index  int // in the caller's slice
	time   time.Time
	series string
	// item is the event's item, checked. For an event without a client
	// id (assign), its keys are provisional, with an id as long as any
	// scheme gives (event.MaxAssignedIDLen), until the event is routed to
	// its table, whose id scheme gives the event its id.
	item   storage.Item
	assign bool
}

// provisionalID stands for an event's id to be assigned, in the item it
// is checked as before its table, and so its id scheme, is known: as
// long as the longest id any scheme assigns, so that the item checked is
// never smaller than the item stored.
var provisionalID = strings.Repeat("A", event.MaxAssignedIDLen)

// Write validates events, gives each without a client id its id under
// the id scheme of the physical table it goes to (event.IDScheme; the
// events' ID fields are set in place), and stores them in the tables of
// the logical table's family, creating tables for late data on demand.
//
// The whole request is validated first (event.Check): if any event is
// invalid Write returns an *event.BatchError naming each one and writes
// nothing; events that are valid but cannot be stored (past the family's
// retention, too large as an item) are refused the same way, before
// anything is written. It returns the number of events written, and nil
// only when all are durable; a *WriteError lists those that are not.
// Writing the same events again never duplicates them.
//
// For a table with rollups, Write also stores the version markers of the
// hours and days its events touch, and must finish within half of
// Options.RollupSettle: it runs under that deadline.
func (db *DB) Write(ctx context.Context, tenant, table string, events []event.Event) (int, error) {
	return oneTable(db.write(ctx, tenant, []writePart{{table: table, check: func(now time.Time) (event.Batch, error) {
		b, err := event.Check(events, db.opts.Limits, now)
		var be *event.BatchError
		if errors.As(err, &be) {
			return b, db.storageProblems(tenant, table, events, be, now)
		}
		return b, err
	}, assigned: func(i int, id string) { events[i].ID = id }}}))
}

// storageProblems adds to be, the problems validation found in events,
// those the other events would meet on their way to storage (past
// retention, too large as an item), so that a refusal names every bad
// event of the request at once. It returns be.
func (db *DB) storageProblems(tenant, table string, events []event.Event, be *event.BatchError, now time.Time) *event.BatchError {
	invalid := make(map[int]bool, len(be.Problems))
	for _, p := range be.Problems {
		invalid[p.Index] = true
	}
	var valid []event.Event
	var index []int // index[j] is the request's index of valid[j]
	for i, e := range events {
		if !invalid[i] {
			valid = append(valid, e)
			index = append(index, i)
		}
	}
	b, err := event.Check(valid, db.opts.Limits, now)
	if err != nil {
		return be
	}
	_, err = db.prepare(tenant, table, db.policy(table), b, now)
	var more *event.BatchError
	if errors.As(err, &more) {
		for _, p := range more.Problems {
			be.Problems = append(be.Problems, event.Problem{Index: index[p.Index], Reason: p.Reason})
		}
		slices.SortStableFunc(be.Problems, func(a, b event.Problem) int { return a.Index - b.Index })
	}
	return be
}

// WriteBatch is Write for events that passed validation already: a Batch
// from event.DecodeJSON, event.DecodeNDJSON or event.Check, made with this
// engine's Options().Limits. It does not validate them again; it still
// refuses events that cannot be stored. The HTTP server writes through
// it.
func (db *DB) WriteBatch(ctx context.Context, tenant, table string, b event.Batch) (int, error) {
	return oneTable(db.write(ctx, tenant, []writePart{batchPart(table, b)}))
}

// oneTable returns the result of a write of one logical table, its
// refusal as it is rather than as a TableError.
func oneTable(n int, err error) (int, error) {
	if te, ok := err.(*TableError); ok {
		return n, te.Err
	}
	return n, err
}

// TableEvents is the events of one logical table in a write of several
// (WriteTables).
type TableEvents struct {
	Table  string
	Events event.Batch
}

// TableError is WriteTables' refusal of one of its logical tables: a bad
// table name (ErrBadTableName), or events that cannot be stored (an
// *event.BatchError, whose indexes are of that table's events). Nothing
// of the request was written.
type TableError struct {
	// Index is the table's index in the request.
	Index int
	Table string
	Err   error
}

func (e *TableError) Error() string { return fmt.Sprintf("table %q: %v", e.Table, e.Err) }

// Unwrap returns the table's refusal.
func (e *TableError) Unwrap() error { return e.Err }

// WriteTables is WriteBatch for one request that names several logical
// tables of a tenant: a line protocol body, a measurement per table, or
// a batch of MQTT messages. The request is one write: every table's
// events are checked, and the new physical tables of all of them counted
// against the table budget together (TableBudget), before anything is
// written, so that a refusal writes nothing and makes no table. A
// refusal of one table's events is a *TableError; a *WriteError's
// Unwritten indexes the events of the tables taken in order, as if
// joined into one batch.
func (db *DB) WriteTables(ctx context.Context, tenant string, tables []TableEvents) (int, error) {
	parts := make([]writePart, len(tables))
	for i, t := range tables {
		parts[i] = batchPart(t.Table, t.Events)
	}
	return db.write(ctx, tenant, parts)
}

// batchPart is the part of a write that stores b, validated already, in
// table.
func batchPart(table string, b event.Batch) writePart {
	return writePart{table: table, check: func(time.Time) (event.Batch, error) { return b, nil }}
}

// CheckWrite reports, writing nothing, what WriteBatch would refuse of
// b: a bad table name (ErrBadTableName), or events that cannot be stored
// (past retention, too large as an item) as an *event.BatchError. A
// caller that writes one request to several logical tables (a line
// protocol body names a table per line) checks each part before writing
// any, so that a refusal leaves nothing written.
func (db *DB) CheckWrite(tenant, table string, b event.Batch) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	_, err := db.prepare(tenant, table, db.policy(table), b, db.opts.Clock.Now())
	return err
}

// writePart is one logical table's share of a write.
type writePart struct {
	table string
	// check returns the part's events, validated, at the write's now.
	check func(now time.Time) (event.Batch, error)
	// assigned, when not nil, is told the id given to event i.
	assigned func(i int, id string)

	// Set by write: the table's policy, its events, and their items
	// when the events are one span (writeSpan): a larger part's
	// items are made again, span by span, as they are written.
	pol    family.TablePolicy
	events event.Batch
	items  []pending
}

// write stores the events of the parts, once every part's table and
// events, the engine's state and the table budget allow the whole write.
// A refusal of one part is a *TableError.
func (db *DB) write(ctx context.Context, tenant string, parts []writePart) (_ int, err error) {
	done, err := db.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, db.opts.WriteTimeout)
	defer cancel()
	defer func() { err = db.pastWriteTimeout(parent, ctx, err) }()
	start := time.Now()
	refused := func(i int, err error) error {
		return &TableError{Index: i, Table: parts[i].table, Err: err}
	}
	for i := range parts {
		if err := checkTableName(parts[i].table); err != nil {
			return 0, refused(i, err)
		}
	}
	if db.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	now := db.opts.Clock.Now()
	total, rollups, some := 0, false, false
	for i := range parts {
		p := &parts[i]
		if p.events, err = p.check(now); err != nil {
			return 0, refused(i, err)
		}
		p.pol = db.policy(p.table)
		if p.items, err = db.prepare(tenant, p.table, p.pol, p.events, now); err != nil {
			return 0, refused(i, err)
		}
		n := p.events.Len()
		total += n
		some = some || n > 0
		rollups = rollups || (p.pol.Rollups && n > 0)
	}
	if !some {
		return 0, nil
	}
	if rollups {
		// A write must end within the settle window, or a rollup could
		// be trusted before all its events are stored.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, db.opts.RollupSettle/2)
		defer cancel()
	}
	if err := db.admitNewTables(ctx, tenant, parts, now); err != nil {
		return 0, err
	}

	var lost failures
	base := 0 // the index of the part's first event among all parts'
	written := false
	for pi := range parts {
		p := &parts[pi]
		n := p.events.Len()
		if n == 0 {
			continue
		}
		if err := db.registerPart(ctx, tenant, p, now); err != nil {
			if !written {
				return 0, err
			}
			lost.add(err, indexes(base, 0, n)...)
			break
		}
		nonce := ""
		if p.pol.Rollups {
			nonce = newNonce()
		}
		stopped := false
		sp := newSpans(p.events, p.pol.Layout.Kind == family.LayoutChunk)
		for span := sp.span(); span != nil; span = sp.span() {
			writes, err := db.routeSpan(ctx, tenant, p, span, sp.whole(span), nonce, now)
			if err == nil {
				for _, tw := range writes {
					tw.base = base
				}
				written = true
				err = db.writeSpan(ctx, writes, &lost)
			} else if !written {
				return 0, err
			}
			if err != nil {
				// Nothing of the request past this span is written:
				// a store that fails one span most likely fails the
				// next.
				lost.add(err, spanIndexes(base, span)...)
				stopped = true
			} else if lost.failed() {
				stopped = true
			}
			if stopped {
				lost.add(nil, sp.rest(base)...)
				break
			}
		}
		base += n
		if stopped {
			for _, q := range parts[pi+1:] {
				lost.add(nil, indexes(base, 0, q.events.Len())...)
				base += q.events.Len()
			}
			break
		}
	}
	unwritten, err := lost.result()
	db.metrics.observeWrite(total, len(unwritten), time.Since(start))
	if err != nil {
		return total - len(unwritten), &WriteError{Unwritten: unwritten, Err: err}
	}
	return total, nil
}

// indexes returns base+from to base+to-1.
func indexes(base, from, to int) []int {
	idx := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		idx = append(idx, base+i)
	}
	return idx
}

// spanIndexes returns base plus each index of span.
func spanIndexes(base int, span []int) []int {
	idx := make([]int, len(span))
	for k, i := range span {
		idx[k] = base + i
	}
	return idx
}

// writeSpan stores the tables' writes of one span of a request's
// events, recording in lost what they could not store. It returns an
// error only when the context ended.
func (db *DB) writeSpan(ctx context.Context, writes []*tableWrite, lost *failures) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(db.opts.WriteParallelism)
	for _, tw := range writes {
		g.Go(func() error {
			err := tw.writeTo(gctx, db.store, db.series)
			if errors.Is(err, storage.ErrTableNotFound) {
				// The lifecycle deleted the table after the catalog saw
				// it (late data for a period past retention, say): make
				// it again and write once more. The table made again
				// has the id scheme of the one it replaces (its entry's,
				// which the registry keeps for the name's next
				// generation), so the items keep their ids.
				db.series.forgetTable(tw.table.name)
				scheme := tw.table.entry.IDScheme()
				if tw.table, err = db.catalog.recreate(gctx, tw.table); err == nil {
					if got := tw.table.entry.IDScheme(); got != scheme {
						// Only a race with another writer making the
						// name's next generation anew could do this; a
						// retry routes and assigns ids again.
						err = fmt.Errorf("table %q was made again with event id scheme %d, not %d: %w", tw.table.name, got, scheme, storage.ErrUnavailable)
					} else {
						tw.series = tw.allSeries
						err = tw.writeTo(gctx, db.store, db.series)
					}
				}
			}
			if err == nil {
				return nil
			}
			var items []int
			var we *storage.BatchWriteError
			if errors.As(err, &we) {
				for _, i := range we.Unwritten {
					items = tw.appendEvents(items, i)
				}
			} else {
				for i := range tw.items {
					items = tw.appendEvents(items, i)
				}
			}
			lost.add(err, items...)
			return nil // the other tables are still written
		})
	}
	_ = g.Wait()
	return nil
}

// registerPart records a part's logical table and the range of its
// events' times.
func (db *DB) registerPart(ctx context.Context, tenant string, p *writePart, now time.Time) error {
	first, last := p.events.Time(0), p.events.Time(0)
	for i := 1; i < p.events.Len(); i++ {
		t := p.events.Time(i)
		first, last = minTime(first, t), maxTime(last, t)
	}
	return db.meta.registerTable(ctx, tenant, p.table, p.pol.Family.Name, now, first, last)
}

// routeSpan makes the items of a part's events from to to (those
// prepare kept, or made again), and sorts them by physical table,
// making the tables that do not exist yet (splitByTable). With rollups,
// each table's write carries the version markers of the buckets its
// items touch, under nonce.
func (db *DB) routeSpan(ctx context.Context, tenant string, p *writePart, span []int, whole bool, nonce string, now time.Time) ([]*tableWrite, error) {
	items := p.items
	if items == nil || !whole {
		var err error
		if items, err = db.prepareSpan(tenant, p.table, p.pol, p.events, span, now, true); err != nil {
			return nil, err
		}
	}
	writes, err := db.splitByTable(ctx, p.pol.Family, tenant, p.table, items, p.events, p.assigned, now, p.pol.Rollups, p.pol.Layout.Kind == family.LayoutChunk)
	if err != nil {
		return nil, err
	}
	switch p.pol.Layout.Kind {
	case family.LayoutMap:
		for _, tw := range writes {
			tw.mapw = &mapWriter{store: db.store, layout: p.pol.Layout, paths: db.paths, metrics: db.metrics}
		}
	case family.LayoutChunk:
		// A table made in another layout keeps it (its registry entry
		// says): its events are written as rows.
		for _, tw := range writes {
			if window := tw.table.entry.ChunkWindow(); window > 0 {
				if err := tw.packChunks(p.events, window, p.pol.Family.TTL); err != nil {
					return nil, err
				}
				continue
			}
			for j, it := range tw.items {
				if tw.items[j], err = rowItem(it, p.events, tw.events[j], p.pol.Family.TTL); err != nil {
					return nil, err
				}
			}
		}
	}
	if p.pol.Rollups {
		for _, tw := range writes {
			tw.markers = tw.markerItems(nonce, now)
		}
	}
	return writes, nil
}

// prepare turns the events into items, without I/O, refusing those that
// cannot be stored, span by span (spans): it returns the items only
// when the events are one span, and nil otherwise, after checking them
// all. It assigns no id: an event without a client id gets its id once
// routed to its table (splitByTable), whose id scheme says how, and its
// item is checked here with a provisional id as long as any scheme's, so
// that the whole request is refused or accepted before the tables are
// known.
func (db *DB) prepare(tenant, table string, pol family.TablePolicy, events event.Batch, now time.Time) ([]pending, error) {
	var problems []event.Problem
	sp := newSpans(events, pol.Layout.Kind == family.LayoutChunk)
	for span := sp.span(); span != nil; span = sp.span() {
		// Only the items of a whole part are kept: those of a span of a
		// larger part are made again as it is written.
		items, err := db.prepareSpan(tenant, table, pol, events, span, now, sp.whole(span))
		var be *event.BatchError
		switch {
		case errors.As(err, &be):
			problems = append(problems, be.Problems...)
		case err != nil:
			return nil, err
		case sp.whole(span):
			return items, nil
		}
	}
	if problems != nil {
		// In the order of the events (a chunk-layout part's spans take
		// them series by series), as a refusal names them.
		slices.SortStableFunc(problems, func(a, b event.Problem) int { return a.Index - b.Index })
		return nil, &event.BatchError{Problems: problems}
	}
	return nil, nil
}

// prepareSpan is prepare for the events of span, whose items it
// returns, when keep is set; a caller that only checks the events
// leaves it unset. The items of the events a chunk takes (bareRow) are
// made without attributes, and without keys for an event without a
// client id; when the items are not kept, not at all.
func (db *DB) prepareSpan(tenant, table string, pol family.TablePolicy, events event.Batch, span []int, now time.Time, keep bool) ([]pending, error) {
	f, layout := pol.Family, pol.Layout
	var problems []event.Problem
	var items []pending
	if keep {
		items = make([]pending, 0, len(span))
	}
	var keys keyText
	for _, i := range span {
		if n := events.FieldsBytes(i); n > admission.MaxFieldsBytes {
			problems = append(problems, event.Problem{Index: i, Reason: fmt.Sprintf("event's fields take %d bytes, more than an item within DynamoDB's limit of %d can hold", n, storage.MaxItemSize)})
			continue
		}
		// An event of a chunk-layout part small enough that it cannot
		// be refused as an item (chunkRowBound) has its row item made
		// without attributes: its fields go into a chunk, and are
		// decoded once, by packChunks.
		bare := layout.Kind == family.LayoutChunk && bareRow(events, i)
		var ev event.Event
		if bare {
			ev = event.Event{Time: events.Time(i), Series: events.Series(i), ID: events.ClientID(i)}
		} else {
			ev = events.Event(i)
		}
		assign := ev.ID == ""
		if reason := db.opts.Tables.horizonProblem(ev.Time, now); reason != "" {
			problems = append(problems, event.Problem{Index: i, Reason: reason})
			continue
		}
		if f.Retention <= 0 {
			// No table of the family expires (Family.ExpiresAt): the
			// table's period is not worked out for every event.
		} else if exp := f.ExpiresAt(f.TableFor(ev.Time, now)); !exp.IsZero() && !now.Before(exp) {
			// Its table would be past retention as soon as it was
			// made: the lifecycle would delete it, and the event, at
			// its next cycle.
			problems = append(problems, event.Problem{Index: i, Reason: fmt.Sprintf("time %s is past family %q's retention of %s (its table expired %s): it would be deleted at once",
				ev.Time.Format(time.RFC3339Nano), f.Name, f.Retention, exp.Format(time.RFC3339))})
			continue
		}
		p := pending{index: i, time: ev.Time, series: ev.Series, assign: assign}
		if bare {
			// A bare event's item is not checked (chunkRowBound), but
			// its partition key is, which its chunk's item shares: a
			// series that a caller's limits allow may make it longer
			// than DynamoDB takes. (Its sort key, a time and an id, is
			// short; its series, tenant and table are valid UTF-8.)
			keys.buf = itemenc.AppendPartitionKey(keys.buf[:0], tenant, table, ev.Series, max(f.Shards-1, 0))
			if len(keys.buf) > storage.MaxPKBytes {
				err := storage.Key{PK: string(keys.buf), SK: "-"}.Validate()
				problems = append(problems, event.Problem{Index: i, Reason: itemProblem(err)})
				continue
			}
		}
		switch {
		case bare && !keep:
			continue
		case bare && assign:
			// Nor keys, which a chunk does not need: should its row
			// be written, splitByTable or packChunks gives it keys
			// (provisionalKeys).
			items = append(items, p)
			continue
		}
		shard := max(f.Shards-1, 0) // the widest shard number, for an id to come
		if assign {
			ev.ID = provisionalID
		} else {
			shard = shardOf(ev.ID, f.Shards)
		}
		// The event's item (itemenc.RowItem), its keys in keys' chunks.
		keys.buf = itemenc.AppendPartitionKey(keys.buf[:0], tenant, table, ev.Series, shard)
		pk := keys.text(keys.buf)
		keys.buf = itemenc.AppendSortKey(keys.buf[:0], ev.Time, ev.ID)
		p.item = storage.Item{PK: pk, SK: keys.text(keys.buf), Attrs: ev.Fields}
		if bare {
			items = append(items, p)
			continue
		}
		if f.TTL > 0 {
			attrs := make(map[string]any, len(ev.Fields)+1)
			for k, v := range ev.Fields {
				attrs[k] = v
			}
			p.item.Attrs = withExpiry(attrs, ev.Time, f.TTL)
		}
		// The event's rules are DynamoDB's (package event takes them from
		// package storage), so a valid event makes a valid item; the item
		// is checked all the same, since a store that refused one item
		// would leave the request written in part. Its size allows for a
		// shard number of a few more digits, should the table have been
		// made with more shards than the family has now; a size past the
		// limit is the problem named first. This is the item's one
		// validation: the store takes the Checked item as it is.
		checked, size, err := p.item.Checked()
		if err == nil {
			p.item = checked
		} else {
			size = storage.ItemSize(p.item)
		}
		if size += 3; size > storage.MaxItemSize {
			problems = append(problems, event.Problem{Index: i, Reason: fmt.Sprintf("event is %d bytes as a stored item, over DynamoDB's limit of %d", size, storage.MaxItemSize)})
			continue
		}
		if err != nil {
			problems = append(problems, event.Problem{Index: i, Reason: itemProblem(err)})
			continue
		}
		if layout.Kind == family.LayoutMap {
			reason := itemenc.MapDepthProblem(ev.Fields)
			if reason == "" {
				reason = mapProblem(p.item)
			}
			if reason != "" {
				problems = append(problems, event.Problem{Index: i, Reason: reason})
				continue
			}
		}
		if keep {
			items = append(items, p)
		}
	}
	if problems != nil {
		return nil, &event.BatchError{Problems: problems}
	}
	return items, nil
}

// withExpiry returns attrs, the attributes of the row item of an event
// of time at, with the expiry of a family's ttl added.
func withExpiry(attrs map[string]any, at time.Time, ttl time.Duration) map[string]any {
	if attrs == nil {
		attrs = make(map[string]any, 1)
	}
	attrs[family.TTLAttribute] = json.Number(strconv.FormatInt(at.Add(ttl).Unix(), 10))
	return attrs
}

// itemProblem says why a store would refuse an event's item, from the
// storage.InvalidError of Item.Validate. The item's attributes are the
// event's fields.
func itemProblem(err error) string {
	var ie storage.InvalidError
	ok := errors.As(err, &ie)
	switch {
	case !ok:
		return err.Error()
	case ie.Path == "":
		return "as a stored item: " + ie.Reason
	default:
		return "fields." + ie.Path + ": " + ie.Reason
	}
}

// tableWrite is the part of a Write that goes to one physical table.
type tableWrite struct {
	table physTable
	items []storage.Item
	// events[i] is the index of the event stored as items[i], and
	// repeats[i] (when i < len(repeats)) those of its repeats, when a
	// request holds the same event more than once, or of the other events
	// a chunk item holds.
	events  []int
	repeats [][]int
	// base is the index, among the events of every part of the write,
	// of the first event of the part events and repeats index.
	base int
	// series are the series written; after splitByTable, only those the series
	// index may lack.
	series    []string
	allSeries []string
	seen      map[string]struct{}
	lastSeen  string
	tenant    string
	ltable    string
	// marks are the (unit, bucket, series) the items touch, when the
	// table keeps rollups, and markers their version marker items.
	marks   map[markKey]struct{}
	markers []storage.Item
	// mapw stores the items in the map layout; nil for the row layout.
	mapw *mapWriter
	// idsLater is set when events without a client id have items of
	// provisional keys, for packChunks to key those it does not pack
	// (splitByTable).
	idsLater bool
}

// appendEvents appends the indexes, among the write's events, of the
// events stored as item i.
func (w *tableWrite) appendEvents(dst []int, i int) []int {
	dst = append(dst, w.base+w.events[i])
	if i < len(w.repeats) {
		for _, r := range w.repeats[i] {
			dst = append(dst, w.base+r)
		}
	}
	return dst
}

func (w *tableWrite) addSeries(s string) {
	if len(w.series) > 0 && s == w.lastSeen {
		return
	}
	w.lastSeen = s
	if _, ok := w.seen[s]; !ok {
		if w.seen == nil {
			w.seen = map[string]struct{}{}
		}
		w.seen[s] = struct{}{}
		w.series = append(w.series, s)
	}
}

// writeTo stores the write's items, after the series index entries and
// rollup version markers they need, so that no event is ever stored
// without the entry that lets a query find its series, nor without the
// marker that makes rollups of its bucket stale. An entry another write
// is storing at the same time is waited for rather than written twice;
// if that write fails, this one writes the entry itself.
func (w *tableWrite) writeTo(ctx context.Context, store storage.Items, idx *seriesCache) error {
	markers := w.markers
	for series := w.series; len(series) > 0 || len(markers) > 0; {
		mine, iw, others := idx.claim(w.table.indexed(), w.tenant, w.ltable, series)
		if len(mine) > 0 || len(markers) > 0 {
			entries := make([]storage.Item, len(mine), len(mine)+len(markers))
			for i, s := range mine {
				entries[i] = storage.Item{PK: itemenc.SeriesIndexKey(w.tenant, w.ltable), SK: itemenc.SeriesIndexPrefix + s, Attrs: map[string]any{}}
			}
			entries = append(entries, markers...)
			err := store.BatchWrite(ctx, w.table.name, entries)
			idx.settle(iw, w.table.indexed(), w.tenant, w.ltable, mine, err)
			if err != nil {
				// None of the items is written. The store's error
				// names the entries it did not write, by their
				// indexes, which are not the items'.
				return &storage.BatchWriteError{Table: w.table.name, Unwritten: allItems(len(w.items)),
					Err: fmt.Errorf("write series index and rollup markers: %w", err)}
			}
			markers = nil
		}
		series = nil
		for _, o := range others {
			select {
			case <-o.done:
			case <-ctx.Done():
				return fmt.Errorf("wait for another write of series index entries: %w", ctx.Err())
			}
			if o.err != nil {
				// Claim what is still missing again, this time to
				// write it.
				series = w.series
			}
		}
	}
	if w.mapw != nil {
		w.mapw.table = w.table.name
		return w.mapw.write(ctx, w.items)
	}
	return store.BatchWrite(ctx, w.table.name, w.items)
}

// allItems returns the indexes 0 to n-1.
func allItems(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// splitByTable sorts items by physical table, makes sure each table exists,
// gives each event of events without a client id its id under its
// table's id scheme (and its item the keys of that id), drops repeats of
// one event within the request, and adds series index entries for series
// new to a table. With rollups, it notes the rollup buckets each table's
// items touch.
//
// In a chunk table of a chunk-layout part (chunks), when no caller is
// told the ids (assigned is nil), an event without a client id keeps
// its provisional keys and is not looked for among the others: its chunk
// holds no id, and Pack drops repeats; packChunks gives the id only to
// an event left out of the chunks, to be written as a row.
func (db *DB) splitByTable(ctx context.Context, f family.Family, tenant, table string, items []pending, events event.Batch, assigned func(int, string), now time.Time, rollups, chunks bool) ([]*tableWrite, error) {
	byName := map[string]*tableWrite{}
	var order []*tableWrite
	// Repeats are found by table and key; a table is its tableWrite,
	// which hashes faster than its name.
	type key struct {
		w      *tableWrite
		pk, sk string
	}
	var seen map[key]int // made at the first item that is looked for
	var w *tableWrite
	var keys keyText
	month := period.MonthOf(now) // the write month of every event
	for i, p := range items {
		written := db.writeTime(p.time, now)
		if db.opts.WriteMonthOfEvent {
			month = period.MonthOf(written)
		}
		// Events of a request mostly share a table: route an event only
		// when the last table cannot take it.
		if w == nil || !w.table.entry.CoversIn(p.time, month) {
			t, err := db.catalog.route(ctx, f, p.time, written)
			if err != nil {
				return nil, err
			}
			w = byName[t.name]
			if w == nil {
				// Room for every item left, which usually all go to
				// this table.
				left := len(items) - i
				w = &tableWrite{table: t, tenant: tenant, ltable: table,
					items: make([]storage.Item, 0, left), events: make([]int, 0, left)}
				byName[t.name] = w
				order = append(order, w)
			}
		}
		switch {
		case p.assign && chunks && assigned == nil && w.table.entry.ChunkWindow() > 0:
			w.idsLater = true
			w.addSeries(p.series)
			if rollups {
				w.markAt(p.series, p.time)
			}
			w.items = append(w.items, p.item)
			w.events = append(w.events, p.index)
			continue
		case p.assign:
			if p.item.SK == "" {
				p.item = provisionalKeys(p.item, tenant, table, p.series, p.time, f.Shards, &keys)
			}
			var id string
			p.item, id = w.assignKeys(p.item, events, p.index, p.series, w.table.shards > 1 || f.Shards > 1, &keys)
			if assigned != nil {
				assigned(p.index, id)
			}
		case w.table.shards != f.Shards:
			// The table keeps the shard count it was made with.
			p.item = p.item.Rekeyed(itemenc.PartitionKey(tenant, table, p.series, shardOf(idOf(p.item.SK), w.table.shards)), p.item.SK)
		}
		w.addSeries(p.series)
		if rollups {
			w.mark(p.series, p.item.SK)
		}
		k := key{w, p.item.PK, p.item.SK}
		if seen == nil {
			seen = make(map[key]int, len(items)-i)
		}
		if j, ok := seen[k]; ok {
			w.items[j] = p.item
			if len(w.repeats) <= j {
				w.repeats = append(w.repeats, make([][]int, j+1-len(w.repeats))...)
			}
			w.repeats[j] = append(w.repeats[j], p.index)
			continue
		}
		seen[k] = len(w.items)
		w.items = append(w.items, p.item)
		w.events = append(w.events, p.index)
	}
	for _, w := range order {
		w.allSeries = w.series
		w.series = db.series.missing(w.table.indexed(), tenant, table, w.series)
	}
	return order, nil
}

// provisionalKeys returns it, the item of an event without a client id
// made without keys (prepareSpan), with the provisional keys prepareSpan
// gives such an event's item: of the widest shard of a family of shards
// shards, and of the provisional id.
func provisionalKeys(it storage.Item, tenant, table, series string, at time.Time, shards int, keys *keyText) storage.Item {
	keys.buf = itemenc.AppendPartitionKey(keys.buf[:0], tenant, table, series, max(shards-1, 0))
	it.PK = keys.text(keys.buf)
	keys.buf = itemenc.AppendSortKey(keys.buf[:0], at, provisionalID)
	it.SK = keys.text(keys.buf)
	return it
}

// assignKeys returns it, the item of event i (of series) without a
// client id, keyed by the id the table's scheme gives the event, and
// the id: its provisional sort key is the event's time key and a
// provisional id, and its provisional partition key of shard 0 is the
// one with one shard, made again when newPK is set.
func (w *tableWrite) assignKeys(it storage.Item, events event.Batch, i int, series string, newPK bool, keys *keyText) (storage.Item, string) {
	id := events.AssignID(i, w.tenant, w.ltable, w.table.entry.IDScheme())
	pk := it.PK
	if newPK {
		keys.buf = itemenc.AppendPartitionKey(keys.buf[:0], w.tenant, w.ltable, series, shardOf(id, w.table.shards))
		pk = keys.text(keys.buf)
	}
	keys.buf = append(append(keys.buf[:0], it.SK[:len(it.SK)-len(provisionalID)]...), id...)
	return it.Rekeyed(pk, keys.text(keys.buf)), id
}

// writeTime returns the time an event of time at, written at now, is
// filed as written: now, or with Options.WriteMonthOfEvent its own time.
func (db *DB) writeTime(at, now time.Time) time.Time {
	if db.opts.WriteMonthOfEvent {
		return at
	}
	return now
}

func idOf(sk string) string {
	_, id, _ := itemenc.ParseSortKey(sk)
	return id
}

// shardOf returns the shard of an event id (itemenc.Shard).
func shardOf(id string, shards int) int { return itemenc.Shard(id, shards) }

// failures collects what concurrent writes could not store: indexes and
// the first error.
type failures struct {
	mu    sync.Mutex
	index []int
	err   error
}

// add records err and the indexes it left unwritten; a nil err adds
// indexes to the first error's.
func (f *failures) add(err error, index ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
	f.index = append(f.index, index...)
}

// failed reports whether a write failed.
func (f *failures) failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err != nil
}

// result returns the indexes, ascending and each once, and the first
// error; nil when nothing failed.
func (f *failures) result() ([]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	slices.Sort(f.index)
	return slices.Compact(f.index), f.err
}
