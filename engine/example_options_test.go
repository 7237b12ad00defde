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
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// The engine is told its tables in Go, with no configuration file: here
// a family of daily tables named by date, and a logical table "cpu" that
// goes to it in the map layout and keeps rollups.
func ExampleOptions() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	metrics := family.Default()
	metrics.Name, metrics.Prefix = "metrics", "tt_metrics_"
	metrics.Granularity = period.Granularity{Unit: period.Day}
	metrics.Naming, metrics.WriteTimeGrouping = naming.Date, false
	schema := family.DefaultSchema()
	schema.Families = append(schema.Families, metrics)
	schema.Tables["cpu"] = family.Table{Family: "metrics", Layout: family.LayoutMap, Rollups: true}

	now := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	db, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clock.NewManual(now)})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	for _, table := range []string{"cpu", "other"} {
		ev := event.Event{Time: now, Series: "host-1", Fields: map[string]any{"load": json.Number("0.5")}}
		if _, err := db.Write(ctx, "acme", table, []event.Event{ev}); err != nil {
			log.Fatal(err)
		}
	}
	tables, err := db.Tables(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tables {
		fmt.Println(t.Family, t.Name)
	}
	fmt.Println("cpu rollups:", db.RollupUse(engine.AggregateQuery{Table: "cpu", Bucket: time.Hour}))
	// Output:
	// events tt_events_1497139200000_1497743999000_6_2017
	// metrics tt_metrics_2017-06-15
	// cpu rollups: used
}
