package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// A request naming two logical tables, as a line protocol body of two
// measurements does, is one write: the table budget counts the new
// tables of both together, and refuses the request whole.
func ExampleDB_WriteTables() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	db, err := engine.Open(ctx, store, engine.Options{Clock: clock.NewManual(now), Tables: engine.TableBudget{MaxNewTablesPerRequest: 2}})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// Each table's events fall in two weeks of their own: four new
	// tables in all, two in each.
	week := 7 * 24 * time.Hour
	batch := func(weeksAgo ...int) event.Batch {
		var evs []event.Event
		for _, w := range weeksAgo {
			evs = append(evs, event.Event{Time: now.Add(-time.Duration(w) * week), Series: "car-17", Fields: map[string]any{"speed": json.Number("88.5")}})
		}
		b, err := event.Check(evs, db.Options().Limits, now)
		if err != nil {
			log.Fatal(err)
		}
		return b
	}
	tables := []engine.TableEvents{
		{Table: "speed", Events: batch(1, 2)},
		{Table: "position", Events: batch(3, 4)},
	}
	_, err = db.WriteTables(ctx, "acme", tables)
	fmt.Println(errors.Is(err, engine.ErrTooManyNewTables))
	made, err := db.Tables(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(made), "tables made")

	// The tables of both fit one request.
	tables[1].Events = batch(1, 2)
	n, err := db.WriteTables(ctx, "acme", tables)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "events written")
	// Output:
	// true
	// 0 tables made
	// 4 events written
}
