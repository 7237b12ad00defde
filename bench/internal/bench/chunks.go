package bench

// Chunks measures the chunk layout beside the row layout on what it is
// for: the DynamoDB write units per event, as DynamoDB reports them
// (ReturnConsumedCapacity, summed by the store's counter), and the bytes
// a table stores per event: its items' sizes (storage.ItemSize, by
// DynamoDB's rules) plus the 100 bytes of indexing overhead DynamoDB
// bills for each item (Developer Guide, "DynamoDB item sizes and
// formats"), over every item of the run's data tables (series index
// entries included). Write units are those of a sustained ingest: a
// first request, which writes the series index entries a table takes
// once per series, is not counted. It writes the benchmark's 180-byte events in two
// request shapes: 5,000 events over 1,000 series (five readings of each,
// a second apart), and Telegraf's (a flush of 1,000 readings: ten of each
// of 100 series, ten seconds apart). It runs against the DynamoDB API
// only when TIMETABLE_DYNAMODB_ENDPOINT is set.
//
// The stored bytes are measured twice for the chunk layout: at write, as
// the requests left the table (a chunk a request's events of a series),
// and packed, once the table is compacted as the lifecycle compacts a
// chunk table leaving the hot tier on DynamoDB (and `timetable compact`
// on an operator's word): compact.Entry rewriting it into its next
// physical table (compact.NextGeneration), a chunk a window of each
// series, its series index entries copied. A table is hot for its first
// period only and kept packed for the rest of its retention, so the
// packed figure is the one a table is billed at most of its life. It is
// that of the run's events, which fill only part of a window (the first
// shape's 15 readings of a series span 15 seconds, Telegraf's 110 span
// 18 minutes, of an hour's window): a table holding whole windows packs
// more events a chunk and spreads its series index over more, so stores
// fewer bytes an event. The row layout's tables are not packed (the
// lifecycle packs chunk tables only): its figure, the baseline of both,
// is as written.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// chunkEvents is how many events each shape writes per layout: two
// requests of the first shape, ten of Telegraf's.
const chunkEvents = 10_000

// itemOverhead is the storage DynamoDB bills for each item besides its
// size: 100 bytes of indexing.
const itemOverhead = 100

// requestShape is how a workload's events arrive: perRequest events a
// request, over series series, each series' readings step apart.
type requestShape struct {
	name       string
	series     int
	perRequest int
	step       time.Duration // between a series' readings
	aim        string
}

var requestShapes = []requestShape{
	{name: "5,000 events over 1,000 series a request", series: 1000, perRequest: 5000, step: time.Second, aim: "<= 0.2"},
	{name: "Telegraf's shape (10 readings of 100 series a request)", series: 100, perRequest: 1000, step: 10 * time.Second, aim: "<= 0.15"},
}

// layoutCost is what one layout's run of a shape cost.
type layoutCost struct {
	units       float64 // write units per event
	storedBytes float64 // bytes stored per event at write, with the per-item overhead
	packedBytes float64 // the same once the table is packed (chunk layout only)
}

// Chunks writes each request shape in the row layout and in the chunk
// layout and reports the write units and stored bytes per event of both,
// and the chunk layout's stored bytes per event once packed.
func Chunks(ctx context.Context, o Options, r *Report) error {
	if os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT") == "" {
		r.Notes = append(r.Notes, "chunk layout figures skipped: TIMETABLE_DYNAMODB_ENDPOINT is not set (make bench starts dynalite)")
		return nil
	}
	store, _, _, units, err := openDynamo(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	var made []string
	defer func() {
		for _, t := range made {
			_ = store.DeleteTable(context.Background(), t)
		}
	}()
	run := 0
	measure := func(shape requestShape, layout family.Layout) (layoutCost, error) {
		run++
		c := family.DefaultSchema()
		c.Families[0].Prefix = fmt.Sprintf("bench%d_ck_", run)
		c.Families[0].Layout = layout
		c.MetaTable = fmt.Sprintf("bench%d_ckmeta", run)
		made = append(made, c.MetaTable)
		gen := newGenerator(start, shape.step/time.Duration(shape.series))
		gen.series = shape.series
		clk := clock.NewManual(gen.event(shape.perRequest + chunkEvents).Time.Add(time.Minute))
		db, err := engine.Open(ctx, store, engine.Options{Schema: c, Clock: clk})
		if err != nil {
			return layoutCost{}, err
		}
		defer db.Close()
		if err := prebuild(ctx, store, c, clk); err != nil {
			return layoutCost{}, err
		}
		// A first request, not counted, writes the series index
		// entries, which a table takes once per series: the figure is
		// that of a sustained ingest.
		if _, err := db.Write(ctx, benchTenant, benchTable, gen.batch(0, shape.perRequest)); err != nil {
			return layoutCost{}, err
		}
		before := units()
		for from := shape.perRequest; from < shape.perRequest+chunkEvents; from += shape.perRequest {
			if _, err := db.Write(ctx, benchTenant, benchTable, gen.batch(from, shape.perRequest)); err != nil {
				return layoutCost{}, err
			}
		}
		used := units() - before
		events := float64(shape.perRequest + chunkEvents)
		cost := layoutCost{units: used / chunkEvents}
		stored, err := tablesBytes(ctx, store, c, &made)
		if err != nil {
			return layoutCost{}, err
		}
		cost.storedBytes = float64(stored) / events
		if layout != family.LayoutChunk {
			return cost, nil
		}
		// The writes are done: the store is the compaction's alone, as
		// `timetable compact` has it.
		if err := db.Close(); err != nil {
			return layoutCost{}, err
		}
		if err := pack(ctx, store, c, clk.Now(), &made); err != nil {
			return layoutCost{}, err
		}
		packed, err := tablesBytes(ctx, store, c, &made)
		if err != nil {
			return layoutCost{}, err
		}
		cost.packedBytes = float64(packed) / events
		return cost, nil
	}
	for _, shape := range requestShapes {
		row, err := measure(shape, family.LayoutRow)
		if err != nil {
			return fmt.Errorf("row layout, %s: %w", shape.name, err)
		}
		chunk, err := measure(shape, family.LayoutChunk)
		if err != nil {
			return fmt.Errorf("chunk layout, %s: %w", shape.name, err)
		}
		o.Progress(fmt.Sprintf("chunk layout, %s: %.3f WCU/ev (rows %.3f), %.1f B/ev stored at write, %.1f packed (rows %.1f)", shape.name, chunk.units, row.units, chunk.storedBytes, chunk.packedBytes, row.storedBytes))
		r.Rows = append(r.Rows,
			Row{Figure: "write units per event, chunk layout, " + shape.name + ", consumed as DynamoDB reports", Value: chunk.units, Unit: "WCU/ev", Baseline: "row layout", Base: row.units, Aim: shape.aim},
			Row{Figure: "bytes stored per event, chunk layout, " + shape.name + ", at write (items + 100 B each)", Value: chunk.storedBytes, Unit: "B/ev", Baseline: "row layout", Base: row.storedBytes, Aim: "<= 25"},
			Row{Figure: "bytes stored per event, chunk layout, " + shape.name + ", packed (items + 100 B each)", Value: chunk.packedBytes, Unit: "B/ev", Baseline: "row layout (not packed)", Base: row.storedBytes, Aim: "<= 25"},
		)
	}
	var fill []string
	for _, shape := range requestShapes {
		fill = append(fill, fmt.Sprintf("%d readings of a series, %v apart", (shape.perRequest+chunkEvents)/shape.series, shape.step))
	}
	r.Notes = append(r.Notes, fmt.Sprintf("chunk layout's bytes stored per event: the items' sizes by DynamoDB's rules plus the 100 B it bills each item, over the run's data tables, series index entries included. \"At write\" is the table as the requests left it (a chunk a request's readings of a series), what a table holds while hot; \"packed\" is the same table once the lifecycle (or `timetable compact`) rewrote it into its next generation, a chunk a %g h window of each series, what it holds for the rest of its retention. The run's events fill part of a window only (%s), so a table of whole windows packs to fewer bytes an event. Row tables are not packed.", family.DefaultChunkWindow.Hours(), strings.Join(fill, "; ")))
	return nil
}

// tablesBytes returns the bytes DynamoDB bills the physical tables the
// registry of schema c names for its families' tables not deleted
// (storedBytes), adding their names to made for the run to delete.
func tablesBytes(ctx context.Context, store storage.Store, c family.Schema, made *[]string) (int, error) {
	reg := registry.New(store, c.MetaTable)
	n := 0
	for _, f := range c.Families {
		entries, err := reg.List(ctx, f.Name)
		if err != nil {
			return 0, fmt.Errorf("list the tables of family %q: %w", f.Name, err)
		}
		for _, e := range entries {
			if e.State == registry.Deleted {
				continue
			}
			*made = append(*made, e.TableName())
			b, err := storedBytes(ctx, store, e.TableName())
			if err != nil {
				return 0, err
			}
			n += b
		}
	}
	return n, nil
}

// pack compacts every live table of the schema's chunk-layout families
// as the lifecycle does on DynamoDB and `timetable compact` on a store of
// its own: rewritten into its next physical table (compact.Entry,
// compact.NextGeneration), the old table deleted once the copy verified.
// The new tables' names are added to made.
func pack(ctx context.Context, store storage.Store, c family.Schema, now time.Time, made *[]string) error {
	reg := registry.New(store, c.MetaTable)
	for _, f := range c.Families {
		if f.Layout != family.LayoutChunk {
			continue
		}
		entries, err := reg.List(ctx, f.Name)
		if err != nil {
			return fmt.Errorf("pack the tables of family %q: %w", f.Name, err)
		}
		for _, e := range entries {
			if e.State != registry.Active {
				continue
			}
			if e.ChunkWindow() == 0 {
				if e, err = reg.Save(ctx, compact.AsChunks(e, f.ChunkWindow)); err != nil {
					return fmt.Errorf("pack table %q: %w", e.Name, err)
				}
			}
			if next, err := e.NextTableName(); err == nil {
				*made = append(*made, next)
			}
			if _, _, err := compact.Entry(ctx, store, reg, e, now, compact.Options{Method: compact.NextGeneration, Eventual: true}); err != nil {
				return fmt.Errorf("pack table %q: %w", e.Name, err)
			}
		}
	}
	return nil
}

// storedBytes returns the bytes DynamoDB bills a table's items as
// storage: their sizes and the overhead of each.
func storedBytes(ctx context.Context, store storage.Store, table string) (int, error) {
	it := store.Scan(ctx, table)
	n := 0
	for it.Next() {
		n += storage.ItemSize(it.Item()) + itemOverhead
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("scan table %q: %w", table, err)
	}
	return n, nil
}
