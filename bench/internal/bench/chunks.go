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

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
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
	storedBytes float64 // bytes stored per event, with the per-item overhead
}

// Chunks writes each request shape in the row layout and in the chunk
// layout and reports the write units and stored bytes per event of both.
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
		ts, err := db.Tables(ctx)
		if err != nil {
			return layoutCost{}, err
		}
		stored := 0
		for _, t := range ts {
			made = append(made, t.Name)
			n, err := storedBytes(ctx, store, t.Name)
			if err != nil {
				return layoutCost{}, err
			}
			stored += n
		}
		return layoutCost{units: used / chunkEvents, storedBytes: float64(stored) / float64(shape.perRequest+chunkEvents)}, nil
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
		o.Progress(fmt.Sprintf("chunk layout, %s: %.3f WCU/ev (rows %.3f), %.1f B/ev stored (rows %.1f)", shape.name, chunk.units, row.units, chunk.storedBytes, row.storedBytes))
		r.Rows = append(r.Rows,
			Row{Figure: "write units per event, chunk layout, " + shape.name + ", consumed as DynamoDB reports", Value: chunk.units, Unit: "WCU/ev", Baseline: "row layout", Base: row.units, Aim: shape.aim},
			Row{Figure: "bytes stored per event, chunk layout, " + shape.name + " (items + 100 B each)", Value: chunk.storedBytes, Unit: "B/ev", Baseline: "row layout", Base: row.storedBytes, Aim: "<= 25"},
		)
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
