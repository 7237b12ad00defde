package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func Example() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	db, err := engine.Open(ctx, store, engine.Options{Clock: clock.NewManual(now)})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// A car back online after two months uploads an old event and a new one.
	// The old event's table is made for late data, written during June: it
	// is on the backfill tier (on-demand) until June ends.
	events := []event.Event{
		{Time: time.Date(2017, 4, 10, 12, 0, 0, 123456000, time.UTC), Series: "car-17", Fields: map[string]any{"speed": json.Number("88.5")}},
		{Time: now, Series: "car-17", Fields: map[string]any{"speed": json.Number("0")}},
	}
	if _, err := db.Write(ctx, "acme", "a_table", events); err != nil {
		log.Fatal(err)
	}
	// Retrying the same write stores nothing twice.
	if _, err := db.Write(ctx, "acme", "a_table", events); err != nil {
		log.Fatal(err)
	}

	page, err := db.Query(ctx, "acme", engine.Query{
		Table: "a_table", From: time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC), To: now,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range page.Events {
		fmt.Println(e.Time.Format(time.RFC3339Nano), e.Series, e.Fields["speed"])
	}
	tables, err := db.Tables(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tables {
		fmt.Println(t.Name, t.WriteMonth, t.Tier)
	}
	// Output:
	// 2017-04-10T12:00:00.123456Z car-17 88.5
	// 2017-06-15T09:00:00Z car-17 0
	// tt_events_1491696000000_1492300799000_6_2017 2017-06 backfill
	// tt_events_1497139200000_1497743999000_6_2017 2017-06 hot
}

// Calendar buckets and exact decimal sums: ten tenths of a kilowatt-hour
// make one, where float64 would say 0.9999999999999999.
func ExampleDB_Aggregate() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	db, err := engine.Open(ctx, store, engine.Options{Clock: clock.NewManual(time.Date(2017, 3, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var events []event.Event
	for i := range 10 {
		events = append(events, event.Event{Time: time.Date(2017, 1, 1+3*i, 8, 0, 0, 0, time.UTC), Series: "meter-1", Fields: map[string]any{"kwh": json.Number("0.1")}})
	}
	events = append(events, event.Event{Time: time.Date(2017, 2, 14, 8, 0, 0, 0, time.UTC), Series: "meter-1", Fields: map[string]any{"kwh": json.Number("2.5")}})
	if _, err := db.Write(ctx, "acme", "meters", events); err != nil {
		log.Fatal(err)
	}

	bucket, calendar, err := engine.ParseBucket("1mo")
	if err != nil {
		log.Fatal(err)
	}
	buckets, err := db.Aggregate(ctx, "acme", engine.AggregateQuery{
		Table: "meters", From: time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2017, 3, 1, 0, 0, 0, -1, time.UTC),
		Bucket: bucket, Calendar: calendar, Fields: []string{"kwh"}, Funcs: []string{"count", "sum", "avg"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range buckets {
		kwh := b.Values["kwh"]
		fmt.Println(b.Start.Format(time.DateOnly), b.End.Format(time.DateOnly), kwh["count"], kwh["sum"], kwh["avg"])
	}
	// Output:
	// 2017-01-01 2017-02-01 10 1 0.1
	// 2017-02-01 2017-03-01 1 2.5 2.5
}
