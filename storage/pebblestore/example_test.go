package pebblestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func Example() {
	ctx := context.Background()
	s, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = s.CreateTable(ctx, storage.TableSpec{
		Name:     "tt_events_2017-04-09",
		Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000},
	})
	if err != nil {
		log.Fatal(err)
	}
	err = s.BatchWrite(ctx, "tt_events_2017-04-09", []storage.Item{
		{PK: "car-17", SK: "2017-04-10T12:00:00.000Z", Attrs: map[string]any{"speed": json.Number("88.50"), "gear": "D"}},
		{PK: "car-17", SK: "2017-04-10T12:00:01.000Z", Attrs: map[string]any{"speed": json.Number("90"), "gear": "D"}},
		{PK: "car-18", SK: "2017-04-10T12:00:00.500Z", Attrs: map[string]any{"speed": json.Number("12"), "gear": "2"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	it := s.Query(ctx, storage.Query{Table: "tt_events_2017-04-09", PK: "car-17", Desc: true, Attrs: []string{"speed"}})
	defer it.Close()
	for it.Next() {
		item := it.Item()
		fmt.Println(item.PK, item.SK, item.Attrs["speed"])
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// car-17 2017-04-10T12:00:01.000Z 90
	// car-17 2017-04-10T12:00:00.000Z 88.5
}
