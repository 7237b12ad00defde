package bench

// Layouts compares the row layout with the map layout's write paths on
// the cost that decides between them: DynamoDB capacity units, requests
// and throughput per event.
//
// Capacity units are metered, not measured: a meter wraps the store and
// charges each request by DynamoDB's published rules from item sizes
// (storage.ItemSize). The meter must read an item before and after each
// Update to know its sizes, so it runs on Pebble, in memory, where those
// reads are cheap and not part of the figure; the engine's logic is the
// same on every store, so the counts are those DynamoDB would see.
// Events per second come from separate runs against the DynamoDB API
// (dynalite under `make bench`) without the meter, whose HTTP requests
// are counted and checked against the metered ones.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// layoutEvents is how many events each configuration writes per run, on
// Pebble and against dynalite alike: dynalite takes UpdateItem requests
// at some hundred a second, so more would make `make bench` long. The
// metered figures are exact at any multiple of 10 per writer.
const layoutEvents = 1000

// layoutConfig is one way of storing a logical table's events.
type layoutConfig struct {
	name   string
	layout family.Layout
	path   family.WritePath
}

var layoutConfigs = []layoutConfig{
	{name: "row layout", layout: family.LayoutRow},
	{name: "map create_first", layout: family.LayoutMap, path: family.WritePathCreateFirst},
	{name: "map append_first", layout: family.LayoutMap, path: family.WritePathAppendFirst},
	{name: "map auto", layout: family.LayoutMap, path: family.WritePathAuto},
}

// workload is how densely a series' events fall in time: perMs distinct
// events in each millisecond, all stamped with the millisecond (the
// precision of the HTTP API's integer times), or, with subMs, evenly
// spaced within it from its start; and how they arrive: one per Write
// call, or, with perCall, that many per call (a gateway posting a
// millisecond's readings together).
type workload struct {
	name    string
	perMs   int
	subMs   bool
	perCall int
}

var workloads = []workload{
	{name: "1/ms", perMs: 1},
	{name: "10/ms", perMs: 10},
	{name: "10/ms in one call", perMs: 10, perCall: 10},
}

// subMsWorkload is 10/ms with times 100 µs apart, metered only: the
// first event of each millisecond is on it and the next ones are not, so
// the second one's blind append expects a tt_ns map the item lacks.
var subMsWorkload = workload{name: "10/ms, 100 µs apart", perMs: 10, subMs: true}

// Layouts adds, for each workload and configuration, write units and
// requests per event (metered on Pebble) and events per second against
// the DynamoDB API (skipped when TIMETABLE_DYNAMODB_ENDPOINT is unset),
// with the row layout as the baseline of each map figure.
func Layouts(ctx context.Context, o Options, r *Report) error {
	gen := newGenerator(start, time.Millisecond)
	writers := max(o.Writers, 1)
	type key struct{ w, c int }
	metered := map[key]meterCounts{}
	var reads int64
	for wi, w := range workloads {
		for ci, c := range layoutConfigs {
			m, err := meterWorkload(ctx, gen, c, w, writers, layoutEvents)
			if err != nil {
				return fmt.Errorf("meter %s, %s: %w", c.name, w.name, err)
			}
			metered[key{wi, ci}] = m
			reads += m.ReadUnits
			o.Progress(fmt.Sprintf("%s, %s: %.2f WCU/ev, %.2f req/ev", c.name, w.name, m.perEvent(m.WriteUnits), m.perEvent(m.Requests)))
		}
	}

	var subMs []string
	for _, c := range layoutConfigs[1:] {
		m, err := meterWorkload(ctx, gen, c, subMsWorkload, writers, layoutEvents)
		if err != nil {
			return fmt.Errorf("meter %s, %s: %w", c.name, subMsWorkload.name, err)
		}
		subMs = append(subMs, fmt.Sprintf("%s %.2f req/ev, %.2f WCU/ev, %.2f RCU/ev", c.name, m.perEvent(m.Requests), m.perEvent(m.WriteUnits), m.perEvent(m.ReadUnits)))
	}

	r.Notes = append(r.Notes,
		fmt.Sprintf("layouts: %d writers, one series each, write %d events in all per configuration, in time order, one event per engine.Write call (a device posting each reading as it comes) unless \"in one call\" (a gateway posting a millisecond's readings together); 1/ms puts each event in its own millisecond, 10/ms ten distinct events (their fields differ) stamped with the same millisecond", writers, layoutEvents),
		"layouts: each series first writes one event at an earlier time, not counted, so making tables, the meta table's record of the logical table and the series index entries are left out",
		"layouts: units by DynamoDB's rules from item sizes: BatchWriteItem, ceil(size/1 KB) per item (the row items are new, so the new size is the one charged); UpdateItem, ceil(max(before, after)/1 KB), at least 1, every rewrite of a growing item counted; a failed condition 1 on a missing item, else by the larger of the item and the one it would have become",
		fmt.Sprintf("layouts: the write paths above read %d RCU in all (strongly consistent GetItem after two failed attempts)", reads),
		fmt.Sprintf("layouts: metered only, %s (the first on the millisecond): %s", subMsWorkload.name, strings.Join(subMs, "; ")),
	)

	rates := map[key]float64{}
	dynamo := os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT") != ""
	if dynamo {
		var mismatches []string
		err := withLayoutStore(ctx, func(store storage.Store, counter *counting, run func() int) error {
			for wi, w := range workloads {
				for ci, c := range layoutConfigs {
					want := metered[key{wi, ci}].Requests
					v, err := median(o.Runs, func() (float64, error) {
						took, requests, err := timeWorkload(ctx, store, counter, run(), gen, c, w, writers, layoutEvents)
						if err != nil {
							return 0, err
						}
						if requests != want {
							mismatches = append(mismatches, fmt.Sprintf("%s %s: %d HTTP requests, %d metered", c.name, w.name, requests, want))
						}
						return rate(layoutEvents, took), nil
					})
					if err != nil {
						return fmt.Errorf("%s, %s against DynamoDB: %w", c.name, w.name, err)
					}
					rates[key{wi, ci}] = v
					o.Progress(fmt.Sprintf("%s, %s (DynamoDB API): %.0f ev/s", c.name, w.name, v))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(mismatches) == 0 {
			r.Notes = append(r.Notes, "layouts: the HTTP requests of every DynamoDB API run equal the requests metered on Pebble")
		} else {
			r.Notes = append(r.Notes, "layouts: HTTP requests differ from the metered ones: "+fmt.Sprint(mismatches))
		}
		r.Notes = append(r.Notes, "layouts: on dynalite an UpdateItem appending to a map item is much slower than a one-item BatchWriteItem (compare map auto and row layout at 10/ms, both 1 req/ev), so these events/s rank the paths on this server rather than predict DynamoDB's latencies")
	} else {
		r.Notes = append(r.Notes, "layouts: events/s skipped: TIMETABLE_DYNAMODB_ENDPOINT is not set (make bench starts dynalite); units and requests are metered on Pebble")
	}

	for wi, w := range workloads {
		row := func(figure, unit string, value func(ci int) float64) {
			base := value(0)
			for ci, c := range layoutConfigs {
				rw := Row{Figure: fmt.Sprintf("%s, %s: %s", c.name, w.name, figure), Value: value(ci), Unit: unit, Aim: "-"}
				if ci > 0 {
					rw.Baseline, rw.Base = layoutConfigs[0].name, base
				}
				r.Rows = append(r.Rows, rw)
			}
		}
		row("write units per event", "WCU/ev", func(ci int) float64 {
			m := metered[key{wi, ci}]
			return m.perEvent(m.WriteUnits)
		})
		row("requests per event", "req/ev", func(ci int) float64 {
			m := metered[key{wi, ci}]
			return m.perEvent(m.Requests)
		})
		if dynamo {
			row("ingest (DynamoDB API)", "ev/s", func(ci int) float64 { return rates[key{wi, ci}] })
		}
	}
	return nil
}

// streams returns, per writer, the events of its series in time order:
// events in all, w.perMs to a millisecond, fields from gen so that sizes
// compare with the other figures.
func streams(gen *generator, w workload, writers, events int) [][]event.Event {
	per := events / writers
	out := make([][]event.Event, writers)
	for s := range out {
		series := fmt.Sprintf("dev-%04d", s)
		out[s] = make([]event.Event, per)
		for j := range per {
			e := gen.event(s*per + j)
			e.Series = series
			e.Time = start.Add(time.Duration(j/w.perMs) * time.Millisecond)
			if w.subMs {
				e.Time = e.Time.Add(time.Duration(j%w.perMs) * (time.Millisecond / time.Duration(w.perMs)))
			}
			out[s][j] = e
		}
	}
	return out
}

// openLayoutEngine opens an engine that stores benchTable as c says,
// its tables and meta table named for run.
func openLayoutEngine(ctx context.Context, store storage.Store, c layoutConfig, run int) (*engine.DB, error) {
	cfg := family.DefaultSchema()
	cfg.Families[0].Prefix = fmt.Sprintf("lay%d_ev_", run)
	cfg.MetaTable = fmt.Sprintf("lay%d_meta", run)
	cfg.Tables[benchTable] = family.Table{Family: cfg.DefaultFamily, Layout: c.layout, WritePath: c.path}
	return engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(start)})
}

// warmUp writes one event per series a second before the workload, so
// that the tables, the logical table's record and the series index
// entries exist.
func warmUp(ctx context.Context, db *engine.DB, streams [][]event.Event) error {
	for _, s := range streams {
		e := s[0]
		e.ID = ""
		e.Time = start.Add(-time.Second)
		if _, err := db.Write(ctx, benchTenant, benchTable, []event.Event{e}); err != nil {
			return fmt.Errorf("warm up: %w", err)
		}
	}
	return nil
}

// writeStreams writes each stream from its own goroutine, one event per
// Write, and returns the time it took.
func writeStreams(ctx context.Context, db *engine.DB, streams [][]event.Event, perCall int) (time.Duration, error) {
	perCall = max(perCall, 1)
	errs := make([]error, len(streams))
	var wg sync.WaitGroup
	begin := time.Now()
	for s, evs := range streams {
		wg.Go(func() {
			for j := 0; j < len(evs); j += perCall {
				if _, err := db.Write(ctx, benchTenant, benchTable, evs[j:min(j+perCall, len(evs))]); err != nil {
					errs[s] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(begin), errors.Join(errs...)
}

// meterWorkload runs workload w in configuration c on an in-memory
// Pebble store under a meter and returns what the writes after the
// warm-up cost.
func meterWorkload(ctx context.Context, gen *generator, c layoutConfig, w workload, writers, events int) (meterCounts, error) {
	inner, err := pebblestore.Open("layouts", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		return meterCounts{}, err
	}
	defer inner.Close()
	m := &meter{Store: inner}
	db, err := openLayoutEngine(ctx, m, c, 0)
	if err != nil {
		return meterCounts{}, err
	}
	defer db.Close()
	ss := streams(gen, w, writers, events)
	if err := warmUp(ctx, db, ss); err != nil {
		return meterCounts{}, err
	}
	m.reset()
	if _, err := writeStreams(ctx, db, ss, w.perCall); err != nil {
		return meterCounts{}, err
	}
	counts := m.counts()
	counts.Events = int64(len(ss) * len(ss[0]))
	return counts, nil
}

// withLayoutStore opens a DynamoDB store whose HTTP requests counter
// counts, calls f with it and a source of fresh run numbers, and deletes
// every table those runs made.
func withLayoutStore(ctx context.Context, f func(store storage.Store, counter *counting, run func() int) error) error {
	store, _, counter, _, err := openDynamo(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	n := 0
	defer func() {
		// Every table the runs made is named "lay<run>_...".
		var made []string
		_ = store.ListTables(context.Background(), "lay", func(name string) bool {
			if !strings.HasPrefix(name, "lay") {
				return false
			}
			made = append(made, name)
			return true
		})
		for _, name := range made {
			_ = store.DeleteTable(context.Background(), name)
		}
	}()
	return f(store, counter, func() int { n++; return n })
}

// timeWorkload runs workload w in configuration c against store with
// fresh tables, and returns how long the writes after the warm-up took
// and how many HTTP requests they sent.
func timeWorkload(ctx context.Context, store storage.Store, counter *counting, run int, gen *generator, c layoutConfig, w workload, writers, events int) (time.Duration, int64, error) {
	db, err := openLayoutEngine(ctx, store, c, run)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	ss := streams(gen, w, writers, events)
	if err := warmUp(ctx, db, ss); err != nil {
		return 0, 0, err
	}
	before := counter.n.Load()
	took, err := writeStreams(ctx, db, ss, w.perCall)
	return took, counter.n.Load() - before, err
}

// meterCounts is what a meter counted.
type meterCounts struct {
	// Events is the number of events written, set by the caller.
	Events int64
	// Requests counts BatchWriteItem, UpdateItem and GetItem requests.
	Requests int64
	// WriteUnits and ReadUnits are the capacity units those requests
	// consume, reads strongly consistent.
	WriteUnits int64
	ReadUnits  int64
	// FailedConditions counts updates refused because a condition did
	// not hold.
	FailedConditions int64
}

// perEvent returns n per event written.
func (c meterCounts) perEvent(n int64) float64 {
	if c.Events == 0 {
		return 0
	}
	return float64(n) / float64(c.Events)
}

// batchWriteLimit is the most items one BatchWriteItem request takes.
const batchWriteLimit = 25

// meter is a storage.Store that counts the requests a DynamoDB store
// would send for each BatchWrite, Update and GetItem, and the capacity
// units DynamoDB would charge for them; other calls pass through,
// uncounted (the workloads only write).
//
// To size an Update it reads the item before and after through the inner
// store, uncounted. Those reads are not atomic with the update, so the
// sizes are exact only when no other writer changes the item meanwhile:
// true of the workloads here, whose writers each keep to one series.
//
// The rules are the DynamoDB Developer Guide's, "Capacity unit
// consumption for write operations" (docs.aws.amazon.com/amazondynamodb/
// latest/developerguide/read-write-operations.html) and "Conditional
// writes" (WorkingWithItems.html#WorkingWithItems.ConditionalUpdate):
//
//   - a write unit is one write of an item up to 1 KB, sizes rounded up
//     to the next KB; BatchWriteItem charges each item as its own PutItem;
//     a PutItem that replaces an item is charged by the larger of the two;
//   - UpdateItem is charged by the larger of the item's sizes before and
//     after the update, however little it changes;
//   - "If a ConditionExpression evaluates to false during a conditional
//     write, DynamoDB still consumes write capacity from the table": by
//     the size of the item, the existing one or the one the write tried
//     to make, whichever is larger, and one unit when the item does not
//     exist;
//   - a strongly consistent read unit reads an item up to 4 KB, and "if
//     you perform a read operation on an item that does not exist,
//     DynamoDB still consumes provisioned read throughput": one unit.
type meter struct {
	storage.Store
	mu struct {
		sync.Mutex
		c meterCounts
	}
}

// add adds to the counts.
func (m *meter) add(requests, wcu, rcu, failed int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.c.Requests += requests
	m.mu.c.WriteUnits += wcu
	m.mu.c.ReadUnits += rcu
	m.mu.c.FailedConditions += failed
}

// counts returns the counts so far.
func (m *meter) counts() meterCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.c
}

// reset sets the counts to zero.
func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.c = meterCounts{}
}

// writeUnits returns the write units of an item of size bytes.
func writeUnits(size int) int64 { return int64(max((size+1023)/1024, 1)) }

// readUnits returns the strongly consistent read units of an item of
// size bytes.
func readUnits(size int) int64 { return int64(max((size+4095)/4096, 1)) }

// BatchWrite counts one request per started 25 items and each item's
// write units by its new size: the engine's batches write new items (rows,
// series index entries, markers), so there is no larger old item to
// charge instead.
func (m *meter) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	err := m.Store.BatchWrite(ctx, table, items)
	var wcu int64
	for _, it := range items {
		wcu += writeUnits(storage.ItemSize(it))
	}
	m.add(int64((len(items)+batchWriteLimit-1)/batchWriteLimit), wcu, 0, 0)
	return err
}

// GetItem counts one strongly consistent read.
func (m *meter) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	it, err := m.Store.GetItem(ctx, table, pk, sk)
	switch {
	case err == nil:
		m.add(1, 0, readUnits(storage.ItemSize(it)), 0)
	case errors.Is(err, storage.ErrItemNotFound):
		m.add(1, 0, readUnits(0), 0)
	}
	return it, err
}

// Update counts one request, charged as the type comment says. An update
// refused for another reason (too large, a table not found) is counted
// as a request without units: DynamoDB refuses it before writing.
func (m *meter) Update(ctx context.Context, u storage.Update) error {
	before, err := m.Store.GetItem(ctx, u.Table, u.PK, u.SK)
	exists := err == nil
	if err != nil && !errors.Is(err, storage.ErrItemNotFound) {
		m.add(1, 0, 0, 0)
		return m.Store.Update(ctx, u) // a missing table: the store says so
	}
	err = m.Store.Update(ctx, u)
	switch {
	case err == nil:
		after, gerr := m.Store.GetItem(ctx, u.Table, u.PK, u.SK)
		if gerr != nil {
			return fmt.Errorf("meter: read item after update: %w", gerr)
		}
		size := storage.ItemSize(after)
		if exists {
			size = max(size, storage.ItemSize(before))
		}
		m.add(1, writeUnits(size), 0, 0)
	case errors.Is(err, storage.ErrConditionFailed):
		wcu := writeUnits(0)
		if exists {
			wcu = writeUnits(max(storage.ItemSize(before), storage.ItemSize(applyActions(before, u.Actions))))
		}
		m.add(1, wcu, 0, 1)
	default:
		m.add(1, 0, 0, 0)
	}
	return err
}

// applyActions returns the item that the actions would make of it,
// without changing it: what a failed conditional update tried to write.
func applyActions(it storage.Item, actions []storage.Action) storage.Item {
	attrs := maps.Clone(it.Attrs)
	if attrs == nil {
		attrs = map[string]any{}
	}
	for _, a := range actions {
		switch a.Kind {
		case storage.ActionSet:
			attrs[a.Attr] = a.Value
		case storage.ActionSetKey:
			m, _ := attrs[a.Attr].(map[string]any)
			m = maps.Clone(m)
			if m == nil {
				m = map[string]any{}
			}
			m[a.Key] = a.Value
			attrs[a.Attr] = m
		case storage.ActionAppend:
			l, _ := attrs[a.Attr].([]any)
			vs, _ := a.Value.([]any)
			attrs[a.Attr] = append(slices.Clip(l), vs...)
		case storage.ActionAdd:
			sum := new(big.Rat)
			for _, v := range []any{attrs[a.Attr], a.Value} {
				if n, ok := v.(json.Number); ok {
					if x, ok := new(big.Rat).SetString(string(n)); ok {
						sum.Add(sum, x)
					}
				}
			}
			attrs[a.Attr] = json.Number(strings.TrimRight(strings.TrimRight(sum.FloatString(20), "0"), "."))
		}
	}
	return storage.Item{PK: it.PK, SK: it.SK, Attrs: attrs}
}
