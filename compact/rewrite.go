package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Method is how a table is compacted.
type Method string

// The methods of compaction.
const (
	// InPlace packs a table's events into chunk items in the table
	// itself, deleting the items they replace (Table): free on Pebble,
	// where a delete is a tombstone.
	InPlace Method = ""
	// NextGeneration rewrites the table's events, packed, into a new
	// physical table, verifies it, switches the registry entry to it and
	// deletes the old table (Rewrite): on DynamoDB, where every item
	// deleted costs a write unit and a table deleted costs nothing.
	NextGeneration Method = "next-generation"
)

// ErrVerify is wrapped by the error of a rewrite whose new table, read
// back, does not hold the events and items the old table held. The entry
// keeps the old table; the new one is deleted, and the next run starts
// over.
var ErrVerify = errors.New("timetable: the rewritten table does not hold what the table it rewrites holds")

// Rewriter is what a rewrite needs of the registry: saving the entry at
// each step, and making the new table as every table of the entry's is
// made (registry.Registry implements it).
type Rewriter interface {
	Entries
	CreateRewriteTable(ctx context.Context, store registry.Creator, e registry.Entry, name string) error
}

// RewriteStore is what a rewrite needs of a store: its items and scans,
// and its tables.
type RewriteStore interface {
	Store
	storage.Tables
}

// Rewrite compacts the table of registry entry e into a new physical
// table (see the package documentation, "Next generation"), resuming the
// rewrite e.Rewrite records if there is one. It returns the entry as last
// saved; an error wrapping ErrStopped when it stopped at its deadline,
// its progress saved; an error wrapping ErrVerify when the copy did not
// verify. Once switched, the old table is deleted only opts.DropAfter
// after the switch: a run before then returns with the drop pending
// (Result.DropPending), for a later run to do.
func Rewrite(ctx context.Context, st RewriteStore, entries Rewriter, e registry.Entry, now time.Time, opts Options) (registry.Entry, Result, error) {
	if err := Packable(e); err != nil {
		return e, Result{}, err
	}
	if e.ChunkWindow() <= 0 {
		return e, Result{}, fmt.Errorf("rewrite table %q: its registry entry says layout %q: make it chunk first", e.Name, e.Policy.Layout)
	}
	opts = opts.withDefaults()
	if err := retryDue(e, now, opts); err != nil {
		return e, Result{}, fmt.Errorf("rewrite table %q: %w", e.Name, err)
	}
	rw := &rewriter{st: st, entries: entries, e: e, now: now, opts: opts}
	err := rw.run(ctx)
	if err != nil {
		err = fmt.Errorf("rewrite table %q: %w", e.Name, err)
	}
	return rw.e, rw.res, err
}

func (o Options) withDefaults() Options {
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = 256
	}
	if o.DeadlineMargin <= 0 {
		o.DeadlineMargin = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return o
}

// rewriter is one run of a rewrite. The segments of a step's scan run in
// goroutines of their own (scan), which change e and res only under mu.
type rewriter struct {
	st      RewriteStore
	entries Rewriter
	now     time.Time
	opts    Options

	mu  sync.Mutex
	e   registry.Entry
	res Result
}

// save saves the entry as it is now; a segment's goroutine calls it
// holding mu.
func (rw *rewriter) save(ctx context.Context) error {
	rw.e.UpdatedAt = rw.now.UTC()
	saved, err := rw.entries.Save(ctx, rw.e)
	if err != nil {
		return fmt.Errorf("save the rewrite's progress: %w", err)
	}
	rw.e = saved
	return nil
}

func (rw *rewriter) run(ctx context.Context) error {
	if rw.e.Rewrite == nil {
		next, err := rw.e.NextTableName()
		if err != nil {
			return err
		}
		// Recorded before the table is made, so that a run killed
		// after making it knows it.
		rw.e.Rewrite = &registry.Rewrite{Step: registry.RewriteCopy, Table: next}
		if err := rw.save(ctx); err != nil {
			return err
		}
	}
	for {
		rw.res.Step, rw.res.Table = rw.e.Rewrite.Step, rw.e.Rewrite.Table
		var err error
		switch rw.e.Rewrite.Step {
		case registry.RewriteCopy:
			err = rw.copy(ctx)
		case registry.RewriteVerify:
			err = rw.verify(ctx)
		case registry.RewriteDrop:
			return rw.drop(ctx)
		default:
			return fmt.Errorf("unknown rewrite step %q", rw.e.Rewrite.Step)
		}
		if err != nil {
			return err
		}
	}
}

// copy packs the events of the entry's table into the new table, and
// copies its other items as they are, each segment of the scan from its
// checkpoint on.
func (rw *rewriter) copy(ctx context.Context) error {
	r := rw.e.Rewrite
	if err := rw.entries.CreateRewriteTable(ctx, rw.st, rw.e, r.Table); err != nil {
		return err
	}
	if len(r.Segments) == 0 {
		// A copy saved before scans were parallel resumes as one
		// segment, after its key.
		n := 1
		if r.After == (storage.Key{}) {
			var err error
			if n, err = rw.segments(ctx); err != nil {
				return err
			}
		}
		r.Segments = startSegments(n, r.After, r.Source)
		r.After, r.Source = storage.Key{}, registry.RewriteSum{}
	}
	// The segments' goroutines read the entry's facts from e: rw.e is
	// replaced at each save.
	e := rw.e
	err := rw.scan(ctx, e.TableName(), rw.opts.Eventual, true, func(s *segmentRun) {
		s.w.group = func(g group) error {
			p, err := packGroup(g, e.ChunkWindow(), e.IDScheme(), e.Shards())
			if err != nil {
				return err
			}
			for _, d := range p.decoded {
				s.sums.events.Add(eventLine(p, d))
			}
			items, packed := copyOf(g, p, e)
			s.res.Groups++
			s.res.Read += len(g.items)
			if packed {
				s.res.Packed++
			}
			s.res.Written += len(items)
			return s.w.out.add(ctx, items...)
		}
		s.w.other = func(it storage.Item) error {
			s.sums.items.Add(itemLine(it))
			s.res.Written++
			return s.w.out.add(ctx, it)
		}
	})
	if err != nil {
		return err
	}
	r.Source = total(r.Segments)
	r.Step, r.Segments, r.Copy = registry.RewriteVerify, startSegments(len(r.Segments), storage.Key{}, registry.RewriteSum{}), registry.RewriteSum{}
	return rw.save(ctx)
}

// verify reads the new table back, strongly consistent, and compares its
// events and other items with what the copy read; once they agree it
// switches the entry to the new table.
func (rw *rewriter) verify(ctx context.Context) error {
	r := rw.e.Rewrite
	if len(r.Segments) == 0 {
		r.Segments = startSegments(1, r.After, r.Copy)
		r.After, r.Copy = storage.Key{}, registry.RewriteSum{}
	}
	e := rw.e
	err := rw.scan(ctx, r.Table, false, false, func(s *segmentRun) {
		s.w.group = func(g group) error {
			p, err := decodeGroup(g, e)
			if err != nil {
				return err
			}
			for _, d := range p.decoded {
				s.sums.events.Add(eventLine(p, d))
			}
			return nil
		}
		s.w.other = func(it storage.Item) error {
			s.sums.items.Add(itemLine(it))
			return nil
		}
	})
	if err != nil {
		return err
	}
	got := total(r.Segments)
	if got != r.Source {
		diff := fmt.Errorf("%w: %q holds %d events (%s) and %d other items (%s), %q %d events (%s) and %d other items (%s)",
			ErrVerify, rw.e.TableName(), r.Source.Events, short(r.Source.EventHash), r.Source.Items, short(r.Source.ItemHash),
			r.Table, got.Events, short(got.EventHash), got.Items, short(got.ItemHash))
		return rw.fail(ctx, diff)
	}
	rw.res.Events = got.Events
	// The switch: one conditional write of the entry, which readers and
	// writers see whole, names the new table and gives the old one to
	// the drop step.
	old := rw.e.TableName()
	rw.e.Physical = r.Table
	rw.e.Rewrite = &registry.Rewrite{Step: registry.RewriteDrop, Table: old, Source: r.Source, Copy: got, SwitchedAt: rw.now.UTC()}
	rw.e.RewriteFailed = nil
	rw.e.ChunkedAt, rw.e.CompactAfter = rw.now.UTC(), storage.Key{}
	if rw.opts.Unfence {
		rw.e.FencedAt = time.Time{}
	}
	return rw.save(ctx)
}

// fail ends a rewrite whose copy did not verify (diff says how): the
// entry keeps the old table, the new one is deleted, so that it costs
// nothing while the table waits, and the failure is recorded on the entry
// with the time the next rewrite may start (RetryDelay). With
// Options.Unfence the fence is lifted: late events land in the old table
// until the next attempt fences it again.
func (rw *rewriter) fail(ctx context.Context, diff error) error {
	ctx = context.WithoutCancel(ctx)
	r := rw.e.Rewrite
	if err := dropTable(ctx, rw.st, r.Table); err != nil {
		return errors.Join(diff, err)
	}
	f := registry.RewriteFailure{Count: 1, At: rw.now.UTC(), Table: r.Table, Reason: diff.Error()}
	if prev := rw.e.RewriteFailed; prev != nil {
		f.Count = prev.Count + 1
	}
	f.RetryAt = f.At.Add(RetryDelay(f.Count))
	rw.e.Rewrite, rw.e.RewriteFailed = nil, &f
	if rw.opts.Unfence {
		rw.e.FencedAt = time.Time{}
	}
	rw.res.RetryAt = f.RetryAt
	return errors.Join(diff, rw.save(ctx))
}

// drop deletes the table the entry switched away from, once
// opts.DropAfter has passed since the switch.
func (rw *rewriter) drop(ctx context.Context) error {
	r := rw.e.Rewrite
	if rw.now.Before(r.SwitchedAt.Add(rw.opts.DropAfter)) {
		rw.res.DropPending = true
		return nil
	}
	if err := dropTable(ctx, rw.st, r.Table); err != nil {
		return err
	}
	rw.e.Rewrite = nil
	rw.res.Dropped = r.Table
	return rw.save(ctx)
}

// dropTable deletes a table, lifting its deletion protection first; a
// table already gone is no error.
func dropTable(ctx context.Context, st storage.Tables, table string) error {
	off := false
	err := st.UpdateTable(ctx, table, storage.TableUpdate{DeletionProtection: &off})
	if err == nil {
		err = st.DeleteTable(ctx, table)
	}
	if err != nil && !errors.Is(err, storage.ErrTableNotFound) {
		return fmt.Errorf("delete table %q: %w", table, err)
	}
	return nil
}

// copyOf returns the items a group is copied into the new table as: its
// events packed into chunks, and the rows of events too large to be one
// as they are; or, for a group of one chunk item or whose events too
// large to be a chunk are not rows of it, its items as they are. It
// reports whether it packed.
func copyOf(g group, p packedGroup, e registry.Entry) ([]storage.Item, bool) {
	if len(g.items) == 1 && chunk.IsSortKey(g.items[0].SK) {
		return g.items, false
	}
	byKey := make(map[storage.Key]storage.Item, len(g.items))
	for _, it := range g.items {
		byKey[it.Key()] = it
	}
	out := p.packed
	for _, ev := range p.alone {
		ev.AssignID(p.tenant, p.table, e.IDScheme())
		it, ok := byKey[storage.Key{PK: g.pk, SK: itemenc.SortKey(ev.Time, ev.ID)}]
		if !ok {
			return g.items, false
		}
		out = append(out, it)
	}
	return out, true
}

// decodeGroup decodes a group's events as packGroup does, without
// packing them.
func decodeGroup(g group, e registry.Entry) (packedGroup, error) {
	tenant, table, series, _, err := itemenc.ParsePartitionKey(g.pk)
	if err != nil {
		return packedGroup{}, err
	}
	decoded, err := chunk.WindowEvents(nil, g.items, e.IDScheme())
	if err != nil {
		return packedGroup{}, fmt.Errorf("partition %q: %w", g.pk, err)
	}
	return packedGroup{tenant: tenant, table: table, series: series, decoded: decoded}, nil
}

// eventLine is what the hash of a rewrite's events takes of one event:
// its tenant, table, series, time and id (its sort key) and fields, the
// same whichever item of the table held it (a row, a map item, a chunk,
// in whichever partition of its series).
func eventLine(p packedGroup, d itemenc.DecodedEvent) []byte {
	b, err := json.Marshal(struct {
		Tenant, Table, Series, Key string
		Fields                     map[string]any
	}{p.tenant, p.table, p.series, d.SK, d.Event.Fields})
	if err != nil {
		// Fields hold storage attribute values, which all marshal.
		panic(fmt.Sprintf("compact: marshal event: %v", err))
	}
	return b
}

// itemLine is what the hash of a rewrite's other items takes of one: the
// item whole (json.Marshal sorts its attribute names).
func itemLine(it storage.Item) []byte {
	b, err := json.Marshal(struct {
		PK, SK string
		Attrs  map[string]any
	}{it.PK, it.SK, it.Attrs})
	if err != nil {
		panic(fmt.Sprintf("compact: marshal item: %v", err))
	}
	return b
}

// sums are the running count and hash of a rewrite's reads of one table.
type sums struct{ events, items archive.ContentHash }

func openSums(s registry.RewriteSum) (*sums, error) {
	ev, err := archive.ParseContentHash(s.EventHash, s.Events)
	if err != nil {
		return nil, fmt.Errorf("rewrite checkpoint: %w", err)
	}
	it, err := archive.ParseContentHash(s.ItemHash, s.Items)
	if err != nil {
		return nil, fmt.Errorf("rewrite checkpoint: %w", err)
	}
	return &sums{events: ev, items: it}, nil
}

func (s *sums) sum() registry.RewriteSum {
	return registry.RewriteSum{Events: s.events.Count(), EventHash: s.events.Sum(), Items: s.items.Count(), ItemHash: s.items.Sum()}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// batch gathers the items a copy writes, and writes them a few hundred
// at a time, and before each checkpoint.
type batch struct {
	st    storage.Items
	table string
	items []storage.Item
	keys  map[storage.Key]int
}

// batchSize is how many items a copy gathers before it writes them.
const batchSize = 200

func (b *batch) add(ctx context.Context, items ...storage.Item) error {
	if b.keys == nil {
		b.keys = map[storage.Key]int{}
	}
	for _, it := range items {
		// A key met twice (a window whose items a scan did not return
		// together) is written once: a call takes distinct keys.
		if i, ok := b.keys[it.Key()]; ok {
			b.items[i] = it
			continue
		}
		b.keys[it.Key()] = len(b.items)
		b.items = append(b.items, it)
	}
	if len(b.items) >= batchSize {
		return b.flush(ctx)
	}
	return nil
}

func (b *batch) flush(ctx context.Context) error {
	if len(b.items) == 0 {
		return nil
	}
	if err := b.st.BatchWrite(ctx, b.table, b.items); err != nil {
		return fmt.Errorf("write %d items to %q: %w", len(b.items), b.table, err)
	}
	b.items, b.keys = b.items[:0], nil
	return nil
}

// walker scans one segment of a table by groups (the event items of one
// partition and chunk window, which a scan returns together) and other
// items, from a checkpoint, checkpointing as it goes and stopping at its
// deadline.
type walker struct {
	ctx      context.Context
	st       Store
	table    string
	seg      storage.Segment
	window   time.Duration
	eventual bool
	opts     Options
	// out, when not nil, is written before every checkpoint.
	out   *batch
	group func(g group) error
	other func(it storage.Item) error
	// checkpoint saves where the segment is; done says it reached its
	// end.
	checkpoint func(ctx context.Context, after storage.Key, done bool) error
	since      int
}

// run walks the segment from after to its end, and checkpoints where it
// ended; at its deadline it checkpoints where it stopped and returns an
// error wrapping ErrStopped.
func (w *walker) run(after storage.Key) error {
	last := after
	err := w.walk(&last)
	if err == nil || errors.Is(err, ErrStopped) {
		ctx := context.WithoutCancel(w.ctx)
		if ferr := w.flush(ctx); ferr != nil {
			return errors.Join(err, ferr)
		}
		if cerr := w.checkpoint(ctx, last, err == nil); cerr != nil {
			return errors.Join(err, cerr)
		}
	}
	return err
}

func (w *walker) flush(ctx context.Context) error {
	if w.out == nil {
		return nil
	}
	return w.out.flush(ctx)
}

func (w *walker) walk(last *storage.Key) error {
	start := *last
	seg := w.seg
	seg.After, seg.Eventual = start, w.eventual
	it := w.st.ScanSegment(w.ctx, w.table, seg)
	defer it.Close()
	var g group
	finish := func() error {
		if len(g.items) == 0 {
			return nil
		}
		if err := w.group(g); err != nil {
			return err
		}
		*last = g.items[len(g.items)-1].Key()
		g = group{}
		return w.done(*last)
	}
	for it.Next() {
		item := it.Item()
		win, ok := eventWindow(item, w.window)
		if ok && len(g.items) > 0 && item.PK == g.pk && win == g.window {
			g.items = append(g.items, item)
			continue
		}
		if err := finish(); err != nil {
			return err
		}
		// Each run does something before it stops, so that runs of
		// a near deadline each make progress.
		if *last != start && w.stopping() {
			return ErrStopped
		}
		if ok {
			g = group{pk: item.PK, window: win, items: []storage.Item{item}}
			continue
		}
		if err := w.other(item); err != nil {
			return err
		}
		*last = item.Key()
		if err := w.done(*last); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("scan %q segment %d of %d: %w", w.table, w.seg.Index, w.seg.Total, err)
	}
	return finish()
}

// done counts a group or item done, checkpointing when due.
func (w *walker) done(last storage.Key) error {
	w.since++
	if w.since < w.opts.CheckpointEvery {
		return nil
	}
	w.since = 0
	if err := w.flush(w.ctx); err != nil {
		return err
	}
	return w.checkpoint(w.ctx, last, false)
}

// stopping reports whether the deadline, less the margin, has come.
func (w *walker) stopping() bool {
	d, ok := w.ctx.Deadline()
	return ok && !w.opts.Now().Before(d.Add(-w.opts.DeadlineMargin))
}
