package dynamostore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// Open makes no request: it builds a client from the AWS configuration
// chain and fills in the defaults, which depend on whether the client has
// an endpoint override. Setting AWS_ENDPOINT_URL_DYNAMODB has the same
// effect as the BaseEndpoint here.
func ExampleOpen() {
	s, err := dynamostore.Open(context.Background(), dynamostore.Options{
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String("http://127.0.0.1:8000") // DynamoDB Local
			o.Region = "us-east-1"
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	opts := s.Options()
	fmt.Println("table waits poll every", opts.WaitMinDelay, "to", opts.WaitMaxDelay)
	fmt.Println(opts.WriteConcurrency, "BatchWriteItem requests in flight,", opts.MaxAttempts, "attempts each")
	// Output:
	// table waits poll every 25ms to 1s
	// 8 BatchWriteItem requests in flight, 10 attempts each
}

// A table, a batch of items and a query over one partition. This example
// needs a DynamoDB endpoint, so it is compiled but not run.
func ExampleStore_Query() {
	ctx := context.Background()
	s, err := dynamostore.Open(ctx, dynamostore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = s.CreateTable(ctx, storage.TableSpec{
		Name:         "tt_events_1491696000000_1492300799000_4_2017",
		Capacity:     storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000},
		Tags:         map[string]string{"family": "events", "tier": "hot"},
		TTLAttribute: "ttl",
	})
	if err != nil {
		log.Fatal(err)
	}
	err = s.BatchWrite(ctx, "tt_events_1491696000000_1492300799000_4_2017", []storage.Item{
		{PK: "car-17", SK: "2017-04-10T12:00:00Z", Attrs: map[string]any{"gear": "D"}},
		{PK: "car-17", SK: "2017-04-10T12:00:01Z", Attrs: map[string]any{"gear": "N"}},
	})
	if err != nil {
		log.Fatal(err) // a *storage.BatchWriteError names the items not written
	}
	it := s.Query(ctx, storage.Query{
		Table: "tt_events_1491696000000_1492300799000_4_2017",
		PK:    "car-17",
		Low:   "2017-04-10T12:00:00Z",
		Desc:  true,
		Limit: 10,
	})
	defer it.Close()
	for it.Next() {
		fmt.Println(it.Item().SK, it.Item().Attrs["gear"])
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
}
