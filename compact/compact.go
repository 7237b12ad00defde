package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Store is the part of a store compaction uses.
type Store interface {
	storage.Items
	storage.Scanner
}

// ErrStopped is returned by Table when it stopped before the end of the
// table: at its context's deadline (less Options.DeadlineMargin), its
// progress checkpointed, for the next run to resume. It wraps
// context.DeadlineExceeded, as the lifecycle's other long actions' stops
// do.
var ErrStopped = fmt.Errorf("timetable: compaction stopped before the end of the table, to resume: %w", context.DeadlineExceeded)

// Options say how one table is compacted.
type Options struct {
	// Window is the chunk window the table's events are packed by.
	Window time.Duration
	// Scheme is the table's id scheme (registry Entry.IDScheme).
	Scheme event.IDScheme
	// Shards is the table's shard count (registry Entry.Shards).
	Shards int
	// After is the checkpoint to resume from: the scan key of the last
	// item of the last group packed. Zero starts at the table's start.
	After storage.Key
	// Checkpoint, when not nil, is called with the new checkpoint every
	// CheckpointEvery groups and when Table stops or ends (with the zero
	// Key once the table is done).
	Checkpoint func(ctx context.Context, after storage.Key) error
	// CheckpointEvery is how many groups are packed between checkpoints;
	// zero means 256.
	CheckpointEvery int
	// DeadlineMargin is how long before its context's deadline Table
	// stops; zero means 5 seconds.
	DeadlineMargin time.Duration
	// Unfence, for Entry, lifts the table's fence (registry
	// Entry.FencedAt) in the save that records the table done: the
	// lifecycle fenced it for the compaction.
	Unfence bool
	// Now, when not nil, is the clock the deadline is compared with; nil
	// means time.Now.
	Now func() time.Time
	// Method, for Entry, is how the table is compacted: in place (the
	// zero value) or into its next physical table. A rewrite under way
	// (registry Entry.Rewrite) is resumed whatever Method says.
	Method Method
	// Eventual lets a rewrite read the table it rewrites eventually
	// consistent (half the read units on DynamoDB): the table's fence has
	// settled, or the store is the caller's alone.
	Eventual bool
	// DropAfter is how long after a rewrite's switch the old table is
	// deleted: long enough for the reads that listed it before the switch
	// to end (the lifecycle gives its fence settle time). Zero deletes it
	// right after the switch.
	DropAfter time.Duration
	// Segments is how many segments a rewrite's scans are divided into
	// (storage.Segment); zero means by the table's size (SegmentsFor).
	// It is fixed when the copy starts: a rewrite resumed keeps its own.
	Segments int
	// Concurrency is how many segments a rewrite scans at once; zero
	// means DefaultConcurrency.
	Concurrency int
	// Retry starts a rewrite even before the time the failure of the
	// last one set (RetryDue): an operator's retry.
	Retry bool
}

// Result says what Table did.
type Result struct {
	// Groups is the number of (partition, window) groups examined, and
	// Packed those rewritten.
	Groups, Packed int
	// Read, Written and Deleted count event items.
	Read, Written, Deleted int
	// After is where the next run resumes; zero once the table is done.
	After storage.Key
	// Step and Table are, for a rewrite, the step it was last at and its
	// table (the new one during copy and verify, the old one during
	// drop); Events the events the new table was verified to hold.
	Step   registry.RewriteStep
	Table  string
	Events int64
	// DropPending says a rewrite switched but the old table's deletion
	// is not due yet (Options.DropAfter); Dropped names the old table
	// once deleted.
	DropPending bool
	Dropped     string
	// RetryAt is, for a rewrite whose verification failed, when the next
	// may start (registry RewriteFailure.RetryAt).
	RetryAt time.Time
}

// Table compacts table (see the package documentation). It returns an
// error wrapping ErrStopped when it stopped at its deadline.
func Table(ctx context.Context, st Store, table string, opts Options) (Result, error) {
	if opts.Window <= 0 {
		return Result{}, fmt.Errorf("compact table %q: window %v is not positive", table, opts.Window)
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = 256
	}
	if opts.DeadlineMargin <= 0 {
		opts.DeadlineMargin = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &compactor{ctx: ctx, st: st, table: table, opts: opts}
	c.res.After = opts.After
	err := c.run()
	if err == nil {
		c.res.After = storage.Key{}
	}
	if opts.Checkpoint != nil && (err == nil || errors.Is(err, ErrStopped)) {
		if cerr := opts.Checkpoint(context.WithoutCancel(ctx), c.res.After); cerr != nil {
			return c.res, fmt.Errorf("compact table %q: checkpoint: %w", table, cerr)
		}
	}
	if err != nil {
		return c.res, fmt.Errorf("compact table %q: %w", table, err)
	}
	return c.res, nil
}

type compactor struct {
	ctx   context.Context
	st    Store
	table string
	opts  Options
	res   Result
	since int // groups since the last checkpoint
}

// group is the event items of one partition and window, in scan order.
type group struct {
	pk     string
	window int64
	items  []storage.Item
}

func (c *compactor) run() error {
	var it storage.Iterator
	if c.opts.After == (storage.Key{}) {
		it = c.st.Scan(c.ctx, c.table)
	} else {
		it = c.st.ScanAfter(c.ctx, c.table, c.opts.After)
	}
	defer it.Close()
	var g group
	for it.Next() {
		item := it.Item()
		w, ok := eventWindow(item, c.opts.Window)
		if !ok {
			continue
		}
		if len(g.items) > 0 && (item.PK != g.pk || w != g.window) {
			if err := c.pack(g); err != nil {
				return err
			}
			if c.stopping() {
				return ErrStopped
			}
			g = group{}
		}
		if len(g.items) == 0 {
			g.pk, g.window = item.PK, w
		}
		g.items = append(g.items, item)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	if len(g.items) > 0 {
		return c.pack(g)
	}
	return nil
}

// stopping reports whether the deadline, less the margin, has come.
func (c *compactor) stopping() bool {
	d, ok := c.ctx.Deadline()
	return ok && !c.opts.Now().Before(d.Add(-c.opts.DeadlineMargin))
}

// eventWindow returns the window of an item that holds events (a chunk,
// a map item or a row of an event partition), and false for any other.
func eventWindow(it storage.Item, window time.Duration) (int64, bool) {
	if _, _, _, _, err := itemenc.ParsePartitionKey(it.PK); err != nil {
		return 0, false
	}
	if !chunk.IsSortKey(it.SK) && !itemenc.IsMapSortKey(it.SK) && !itemenc.IsRowSortKey(it.SK) {
		return 0, false
	}
	t, ok := chunk.KeyTime(it.SK)
	if !ok {
		return 0, false
	}
	return chunk.WindowStart(t, window).UnixNano(), true
}

// pack packs one group: writes its chunks, then deletes what they
// replace, then checkpoints when due.
func (c *compactor) pack(g group) error {
	c.res.Groups++
	c.res.Read += len(g.items)
	last := g.items[len(g.items)-1].Key()
	if len(g.items) == 1 && chunk.IsSortKey(g.items[0].SK) {
		return c.done(last)
	}
	p, err := packGroup(g, c.opts.Window, c.opts.Scheme, c.opts.Shards)
	if err != nil {
		return err
	}
	tenant, table, packed, alone := p.tenant, p.table, p.packed, p.alone
	have := make(map[storage.Key]bool, len(g.items))
	for _, it := range g.items {
		have[it.Key()] = true
	}
	keep := make(map[storage.Key]bool, len(packed)+len(alone))
	for _, ev := range alone {
		// Too large to be a chunk: it stays the row it is.
		ev.AssignID(tenant, table, c.opts.Scheme)
		k := storage.Key{PK: g.pk, SK: itemenc.SortKey(ev.Time, ev.ID)}
		if !have[k] {
			return c.done(last) // not a row of this partition: left as it is
		}
		keep[k] = true
	}
	var write []storage.Item
	for _, it := range packed {
		keep[it.Key()] = true
		if !have[it.Key()] {
			write = append(write, it)
		}
	}
	var del []storage.Key
	for _, it := range g.items {
		if !keep[it.Key()] {
			del = append(del, it.Key())
		}
	}
	if len(write) > 0 {
		if err := c.st.BatchWrite(c.ctx, c.table, write); err != nil {
			return fmt.Errorf("write the chunks of partition %q: %w", g.pk, err)
		}
		c.res.Written += len(write)
	}
	if len(del) > 0 {
		if err := c.st.BatchDelete(c.ctx, c.table, del); err != nil {
			return fmt.Errorf("delete the items packed of partition %q: %w", g.pk, err)
		}
		c.res.Deleted += len(del)
	}
	if len(write) > 0 || len(del) > 0 {
		c.res.Packed++
	}
	return c.done(last)
}

// groupExpiry returns the expiry of the chunks packed from a group's
// items: the latest of their expiries (family.TTLAttribute), so that no
// event expires earlier than its item would have; none when an item has
// none (written before the family set a ttl), which would never have
// expired.
func groupExpiry(items []storage.Item) chunk.Expiry {
	var latest int64
	for _, it := range items {
		n, ok := it.Attrs[family.TTLAttribute].(json.Number)
		if !ok {
			return chunk.Expiry{}
		}
		at, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return chunk.Expiry{}
		}
		latest = max(latest, at)
	}
	return chunk.Expiry{At: time.Unix(latest, 0)}
}

// done records a group done, checkpointing when due.
func (c *compactor) done(last storage.Key) error {
	c.res.After = last
	c.since++
	if c.since < c.opts.CheckpointEvery || c.opts.Checkpoint == nil {
		return nil
	}
	c.since = 0
	if err := c.opts.Checkpoint(c.ctx, last); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// packedGroup is a group's events, decoded, and packed into chunks.
type packedGroup struct {
	tenant, table, series string
	// decoded are the group's events, each once, in sort-key order, with
	// the ids they are read with.
	decoded []itemenc.DecodedEvent
	// packed are the chunk items that hold them but for alone, the
	// events too large to be a chunk.
	packed []storage.Item
	alone  []event.Event
}

// packGroup decodes a group's events, each kept once, and packs them
// (chunk.Pack) into chunk items, keyed by their content. An event whose
// id is the one its row would be given (event.Event.AssignID under the
// table's id scheme) is packed without it, as a written chunk holds it.
// The group's items are left as they are.
func packGroup(g group, window time.Duration, scheme event.IDScheme, shards int) (packedGroup, error) {
	tenant, table, series, _, err := itemenc.ParsePartitionKey(g.pk)
	if err != nil {
		return packedGroup{}, err
	}
	copies := make([]storage.Item, len(g.items))
	for i, it := range g.items {
		// WindowEvents takes row items' fields over.
		copies[i] = storage.Item{PK: it.PK, SK: it.SK, Attrs: maps.Clone(it.Attrs)}
	}
	decoded, err := chunk.WindowEvents(nil, copies, scheme)
	if err != nil {
		return packedGroup{}, fmt.Errorf("partition %q: %w", g.pk, err)
	}
	evs := make([]event.Event, len(decoded))
	for i, d := range decoded {
		ev := d.Event
		ev.Series = series
		if ev.ID != "" {
			probe := ev
			probe.ID = ""
			probe.AssignID(tenant, table, scheme)
			if probe.ID == ev.ID {
				ev.ID = "" // the id its row is given: a chunk holds none
			}
		}
		evs[i] = ev
	}
	packed, alone, err := chunk.Pack(chunk.Series{Tenant: tenant, Table: table, Series: series, Shards: shards, Expiry: groupExpiry(g.items)}, window, evs)
	if err != nil {
		return packedGroup{}, fmt.Errorf("partition %q: %w", g.pk, err)
	}
	return packedGroup{tenant: tenant, table: table, series: series, decoded: decoded, packed: packed, alone: alone}, nil
}
