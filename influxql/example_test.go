package influxql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event/lineproto"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func ExampleExecute() {
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

	lines := "weather,host=web1,region=eu temp=21 1497510000000000000\n" +
		"weather,host=web2,region=eu temp=23 1497510000000000000\n" +
		"weather,host=web3,region=us temp=30 1497510000000000000\n"
	tables, err := lineproto.Decode([]byte(lines), lineproto.Options{Limits: db.Options().Limits, Now: now})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tables {
		if _, err := db.WriteBatch(ctx, "acme", t.Name, t.Events); err != nil {
			log.Fatal(err)
		}
	}

	stmts, err := influxql.Parse(`SHOW TAG VALUES FROM weather WITH KEY = "host" WHERE region = 'eu';
		SELECT mean(temp) FROM weather WHERE region = 'eu' AND time >= now() - 6h`, nil)
	if err != nil {
		log.Fatal(err)
	}
	results, _ := influxql.Execute(ctx, db, "acme", stmts, influxql.Options{Database: "acme", Now: now})
	for _, r := range results {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
	// Output:
	// {"statement_id":0,"series":[{"name":"weather","columns":["key","value"],"values":[["host","web1"],["host","web2"]]}]}
	// {"statement_id":1,"series":[{"name":"weather","columns":["time","mean"],"values":[["2017-06-15T03:00:00Z",22]]}]}
}
