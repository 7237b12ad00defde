package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// counting is an HTTP client that counts the requests it sends.
type counting struct {
	next aws.HTTPClient
	n    atomic.Int64
}

func (c *counting) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.Do(r)
}

// dynamoWriteConcurrency is the BatchWriteItem requests each writer keeps
// in flight: the DynamoDB store's default, used by the raw baseline too.
const dynamoWriteConcurrency = 8

// Dynamo measures the DynamoDB backend against the server the standard
// AWS configuration chain points at (AWS_ENDPOINT_URL_DYNAMODB: dynalite
// under `make bench`), next to the raw SDK's ceiling and a naive loop. It
// runs only when TIMETABLE_DYNAMODB_ENDPOINT is set, so that it never
// writes to a real account by accident.
func Dynamo(ctx context.Context, o Options, r *Report) error {
	if os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT") == "" {
		r.Notes = append(r.Notes, "DynamoDB figures skipped: TIMETABLE_DYNAMODB_ENDPOINT is not set (make bench starts dynalite)")
		return nil
	}
	// A quarter of the Pebble runs' events, 50 batches by default: the
	// first write to a table (the registry's lookup, then the series index
	// entries, before the events) takes two to three times a later batch,
	// a cost a sustained ingest pays once per table, which 20 batches
	// overstated.
	events := max(o.Events/4, 2000)
	store, client, counter, units, err := openDynamo(ctx)
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

	gen := newGenerator(start, time.Millisecond)
	var batches [][]int
	for from := 0; from < events; from += o.Batch {
		batches = append(batches, []int{from, min(o.Batch, events-from)})
	}
	run := 0

	var requests int64
	var consumed float64
	library := func() (float64, error) {
		run++
		c := family.DefaultSchema()
		c.Families[0].Prefix = fmt.Sprintf("bench%d_ev_", run)
		c.MetaTable = fmt.Sprintf("bench%d_meta", run)
		made = append(made, c.MetaTable)
		clk := clock.NewManual(start.Add(time.Duration(events) * time.Millisecond))
		db, err := engine.Open(ctx, store, engine.Options{Schema: c, Clock: clk})
		if err != nil {
			return 0, err
		}
		defer db.Close()
		// The period's table is made before the clock starts, as the
		// raw baseline's is, and as the lifecycle manager makes it
		// ahead of its period in a deployment, so that no write waits
		// for a CreateTable.
		if err := prebuild(ctx, store, c, clk); err != nil {
			return 0, err
		}
		pre := make([][]event.Event, len(batches))
		idx := make([][]int, len(batches))
		for i, b := range batches {
			pre[i], idx[i] = gen.batch(b[0], b[1]), []int{i}
		}
		before, unitsBefore := counter.n.Load(), units()
		took, err := parallel(o.Writers, idx, func(b []int) error {
			_, err := db.Write(ctx, benchTenant, benchTable, pre[b[0]])
			return err
		})
		if err != nil {
			return 0, err
		}
		requests, consumed = counter.n.Load()-before, units()-unitsBefore
		ts, err := db.Tables(ctx)
		if err != nil {
			return 0, err
		}
		for _, t := range ts {
			made = append(made, t.Name)
		}
		return rate(events, took), nil
	}
	baseline := func() (float64, error) {
		run++
		name := fmt.Sprintf("bench%d_raw", run)
		if err := store.CreateTable(ctx, storage.TableSpec{Name: name, Capacity: storage.Capacity{Billing: storage.OnDemand}}); err != nil {
			return 0, err
		}
		made = append(made, name)
		return rawBatchWriteItem(ctx, client, name, gen, events, o.Writers*dynamoWriteConcurrency)
	}
	// One turn of each first, not counted: the first run of a bench was
	// its slowest, as dynalite's JIT warmed up and the client opened its
	// connections, and it was always the library's.
	if _, err := library(); err != nil {
		return err
	}
	if _, err := baseline(); err != nil {
		return err
	}
	// The two take turns, so that a change of load on the shared machine
	// falls on both.
	m, err := interleavedMedians(o.Runs, library, baseline)
	if err != nil {
		return err
	}
	lib, raw := m[0], m[1]
	o.Progress(fmt.Sprintf("DynamoDB library ingest: %.0f ev/s, raw BatchWriteItem: %.0f ev/s", lib, raw))

	run++
	naiveTable := fmt.Sprintf("bench%d_naive", run)
	if err := store.CreateTable(ctx, storage.TableSpec{Name: naiveTable, Capacity: storage.Capacity{Billing: storage.OnDemand}}); err != nil {
		return err
	}
	made = append(made, naiveTable)
	naive, err := naivePutItem(ctx, client, naiveTable, gen, min(events, 2000))
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("naive PutItem: %.0f ev/s", naive))

	r.Rows = append(r.Rows,
		Row{Figure: "ingest, library (DynamoDB API)", Value: lib, Unit: "ev/s", Baseline: "raw SDK BatchWriteItem x25", Base: raw, Aim: ">= 0.90 of raw"},
		Row{Figure: "ingest, library (DynamoDB API)", Value: lib, Unit: "ev/s", Baseline: "naive PutItem loop", Base: naive, Aim: ">= 10x naive"},
		Row{Figure: "requests per event (DynamoDB API)", Value: float64(requests) / float64(events), Unit: "req/ev", Baseline: "raw BatchWriteItem x25", Base: 1.0 / 25, Aim: "-"},
		Row{Figure: "write units per event (row layout), consumed as DynamoDB reports", Value: consumed / float64(events), Unit: "WCU/ev", Baseline: "1 per started KiB of each item", Base: writeUnitsPerEvent(gen, events), Aim: "-"},
	)
	return nil
}

// openDynamo opens a DynamoDB store on the server the standard AWS
// configuration chain points at, with a client whose HTTP requests the
// returned counter counts, on the HTTP client a store gives the clients
// it builds (dynamostore.NewHTTPClient), whose pool keeps a connection for
// each request in flight, as a deployment's does. units returns the write
// capacity units the store has consumed so far, from its own Prometheus
// counter of what DynamoDB reports (ReturnConsumedCapacity).
func openDynamo(ctx context.Context) (store *dynamostore.Store, client *dynamodb.Client, counter *counting, units func() float64, err error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	counter = &counting{next: dynamostore.NewHTTPClient()}
	client = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.HTTPClient = counter
	})
	reg := prometheus.NewRegistry()
	store, err = dynamostore.Open(ctx, dynamostore.Options{Client: client, WriteConcurrency: dynamoWriteConcurrency, Registerer: reg})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return store, client, counter, func() float64 { return consumedWriteUnits(reg) }, nil
}

// writeOperations are the DynamoDB operations that consume write units.
var writeOperations = []string{"BatchWriteItem", "PutItem", "UpdateItem", "DeleteItem"}

// consumedWriteUnits sums the store's consumed-capacity counter over every table
// for the operations that write.
func consumedWriteUnits(g prometheus.Gatherer) float64 {
	families, err := g.Gather()
	if err != nil {
		return math.NaN()
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != "timetable_dynamodb_consumed_capacity_units_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && slices.Contains(writeOperations, l.GetValue()) {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// prebuild runs one lifecycle cycle on configuration c at clk's time,
// which makes the tables of that period and the next.
func prebuild(ctx context.Context, store *dynamostore.Store, c family.Schema, clk clock.Clock) error {
	r, err := lifecycle.New(lifecycle.Options{Store: store, Families: c.Families, MetaTable: c.MetaTable, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	_, err = r.Reconcile(ctx, false)
	return err
}

// writeUnitsPerEvent counts DynamoDB write units by item size, one unit
// per started KiB per item, for the events and the series index entries
// the engine writes with them, per event.
func writeUnitsPerEvent(gen *generator, events int) float64 {
	units := 0
	for i := range events {
		e := gen.event(i)
		e.AssignID(benchTenant, benchTable, event.LatestIDScheme)
		size := storage.ItemSize(storage.Item{PK: fmt.Sprintf("%s#%s#%s#0", benchTenant, benchTable, e.Series), SK: e.Time.Format("2006-01-02T15:04:05.000000000Z") + "#" + e.ID, Attrs: e.Fields})
		units += (size + 1023) / 1024
	}
	units += min(events, seriesCount) // one index entry per series and table, under 1 KiB each
	return float64(units) / float64(events)
}

// item returns the native item of event i, as the engine would store it.
func nativeItem(gen *generator, i int) map[string]types.AttributeValue {
	e := gen.event(i)
	e.AssignID(benchTenant, benchTable, event.LatestIDScheme)
	item := map[string]types.AttributeValue{
		storage.PKAttr: &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%s#%s#0", benchTenant, benchTable, e.Series)},
		storage.SKAttr: &types.AttributeValueMemberS{Value: e.Time.Format("2006-01-02T15:04:05.000000000Z") + "#" + e.ID},
	}
	for k, v := range e.Fields {
		switch v := v.(type) {
		case string:
			item[k] = &types.AttributeValueMemberS{Value: v}
		default:
			item[k] = &types.AttributeValueMemberN{Value: fmt.Sprint(v)}
		}
	}
	return item
}

// rawBatchWriteItem writes the events with the bare SDK: BatchWriteItem of
// 25 items, inFlight requests at once, unprocessed items sent again. It is
// the ceiling of the endpoint.
func rawBatchWriteItem(ctx context.Context, client *dynamodb.Client, table string, gen *generator, events, inFlight int) (float64, error) {
	var reqs [][]int
	var bodies [][]types.WriteRequest
	for from := 0; from < events; from += 25 {
		var wr []types.WriteRequest
		for i := from; i < min(from+25, events); i++ {
			wr = append(wr, types.WriteRequest{PutRequest: &types.PutRequest{Item: nativeItem(gen, i)}})
		}
		reqs = append(reqs, []int{len(bodies)})
		bodies = append(bodies, wr)
	}
	took, err := parallel(inFlight, reqs, func(b []int) error {
		pending := map[string][]types.WriteRequest{table: bodies[b[0]]}
		for len(pending) > 0 {
			out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return err
			}
			pending = out.UnprocessedItems
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return rate(events, took), nil
}

// naivePutItem is what a user hand-rolls: one PutItem per event, one
// goroutine.
func naivePutItem(ctx context.Context, client *dynamodb.Client, table string, gen *generator, events int) (float64, error) {
	items := make([]map[string]types.AttributeValue, events)
	for i := range items {
		items[i] = nativeItem(gen, i)
	}
	begin := time.Now()
	for _, item := range items {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
			return 0, err
		}
	}
	return rate(events, time.Since(begin)), nil
}
