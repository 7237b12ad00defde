package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// The three ingest benchmarks write the same 180-byte events to dynalite:
// through BatchWrite, with the raw SDK doing BatchWriteItem of 25 at the
// same concurrency (the ceiling of the endpoint), and with one PutItem per
// event in one goroutine (what a user hand-rolls). Each reports events/s,
// requests/event and write units/event.

// benchEventBytes is the size of a benchmark event as DynamoDB counts it.
const benchEventBytes = 180

// benchBatch is how many events one BatchWrite call carries, as one ingest
// request of the engine would.
const benchBatch = 1000

// benchItem returns event i: a row-layout item of exactly 180 bytes.
func benchItem(i int64) storage.Item {
	it := storage.Item{
		PK: fmt.Sprintf("tenant-1#a_table#car-%d#0", i%16),
		SK: fmt.Sprintf("%016d#%016x", 1491825600000000+i, i),
		Attrs: map[string]any{
			"speed": json.Number(fmt.Sprintf("%d.5", i%120)),
			"gear":  "D",
			"lat":   json.Number("48.137154"),
			"lon":   json.Number("11.576124"),
		},
	}
	it.Attrs["pad"] = strings.Repeat("x", benchEventBytes-storage.ItemSize(it)-len("pad"))
	return it
}

// benchTable creates an on-demand table for a benchmark, deleted after it.
func benchTable(b *testing.B, s *Store) string {
	b.Helper()
	return createTable(b, s, storage.TableSpec{Capacity: storage.Capacity{Billing: storage.OnDemand}})
}

// reportIngest reports the figures every ingest benchmark prints.
func reportIngest(b *testing.B, events int64, requests int, sizes int) {
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(requests)/float64(events), "requests/event")
	// One write unit per started KB of each item.
	b.ReportMetric(float64((sizes+1023)/1024), "wcu/event")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkBatchWrite(b *testing.B) {
	counter := &requestCounter{}
	s := openStore(b, Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	table := benchTable(b, s)
	require.Equal(b, benchEventBytes, storage.ItemSize(benchItem(0)))
	ctx := context.Background()
	items := make([]storage.Item, benchBatch)
	var next int64
	counter.reset()
	b.ResetTimer()
	for b.Loop() {
		for i := range items {
			items[i] = benchItem(next)
			next++
		}
		if err := s.BatchWrite(ctx, table, items); err != nil {
			b.Fatal(err)
		}
	}
	reportIngest(b, next, counter.count("BatchWriteItem"), benchEventBytes)
}

func BenchmarkRawBatchWriteItem(b *testing.B) {
	counter := &requestCounter{}
	s := openStore(b, Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	table := benchTable(b, s)
	client := s.Client()
	ctx := context.Background()
	var next int64
	counter.reset()
	b.ResetTimer()
	for b.Loop() {
		// benchBatch events in requests of 25, WriteConcurrency of them
		// in flight, as BatchWrite does, without its validation.
		base := next
		next += benchBatch
		var chunk atomic.Int64
		var wg sync.WaitGroup
		for range DefaultWriteConcurrency {
			wg.Go(func() {
				for {
					lo := chunk.Add(batchSize) - batchSize
					if lo >= benchBatch {
						return
					}
					reqs := make([]types.WriteRequest, 0, batchSize)
					for i := lo; i < min(lo+batchSize, benchBatch); i++ {
						item, err := marshalItem(benchItem(base + i))
						if err != nil {
							b.Error(err)
							return
						}
						reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
					}
					for len(reqs) > 0 {
						out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}})
						if err != nil {
							b.Error(err)
							return
						}
						reqs = out.UnprocessedItems[table]
					}
				}
			})
		}
		wg.Wait()
	}
	reportIngest(b, next, counter.count("BatchWriteItem"), benchEventBytes)
}

func BenchmarkNaivePutItem(b *testing.B) {
	counter := &requestCounter{}
	s := openStore(b, Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	table := benchTable(b, s)
	client := s.Client()
	ctx := context.Background()
	var next int64
	counter.reset()
	b.ResetTimer()
	for b.Loop() {
		item, err := marshalItem(benchItem(next))
		if err != nil {
			b.Fatal(err)
		}
		next++
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			b.Fatal(err)
		}
	}
	reportIngest(b, next, counter.count("PutItem"), benchEventBytes)
}
