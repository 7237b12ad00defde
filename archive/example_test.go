package archive_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func Example() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	const table = "tt_events_1491696000000_1492300799000_4_2017"
	if err := store.CreateTable(ctx, storage.TableSpec{Name: table}); err != nil {
		log.Fatal(err)
	}
	if err := store.BatchWrite(ctx, table, []storage.Item{{PK: "acme#a_table#car-17#0", SK: "2017-04-10T12:00:00.000000000Z#a"}}); err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "archive-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	a, err := archive.Open(ctx, "file://"+dir, store, archive.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Archive(ctx, table); err != nil {
		log.Fatal(err)
	}
	ok, err := a.Verified(ctx, table)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified:", ok)
	// Only now may the table go; a restore brings it back.
	if err := store.DeleteTable(ctx, table); err != nil {
		log.Fatal(err)
	}
	if err := a.Restore(ctx, table, ""); err != nil {
		log.Fatal(err)
	}
	ms, err := a.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range ms {
		fmt.Println(m.Table, m.ItemCount)
	}
	// Output:
	// verified: true
	// tt_events_1491696000000_1492300799000_4_2017 1
}
