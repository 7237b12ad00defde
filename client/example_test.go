package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/tenant"
)

// adminToken is the admin token of the examples' server.
const adminToken = "an-admin-token-of-32-characters!"

// serve runs timetable's server on a Pebble store in a temporary
// directory, its clock at 2017-04-10 13:00 UTC, and returns its URL and
// what stops it.
func serve() (url string, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "timetable-client-example")
	if err != nil {
		log.Fatal(err)
	}
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2017, 4, 10, 13, 0, 0, 0, time.UTC)
	db, err := engine.Open(ctx, store, engine.Options{Clock: clock.NewManual(now), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	handler, err := server.New(db, server.Options{TenantDirectory: tenants, AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	return srv.URL, func() {
		srv.Close()
		if err := errors.Join(db.Close(), store.Close(), os.RemoveAll(dir)); err != nil {
			log.Fatal(err)
		}
	}
}

func Example() {
	url, stop := serve()
	defer stop()
	ctx := context.Background()

	// The admin token adds a tenant, and gets its first API key.
	admin, err := client.New(url, adminToken, nil)
	if err != nil {
		log.Fatal(err)
	}
	added, err := admin.AddTenant(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tenant", added.Tenant.Name, "key scope", added.Key.Scope)

	// The key writes and reads the tenant's events.
	acme, err := client.New(url, added.Key.Secret, nil)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	var events []api.Event
	for i := range 5 {
		events = append(events, api.Event{
			Time:   start.Add(time.Duration(i) * time.Minute),
			Series: "car-17",
			Fields: map[string]any{"speed": json.Number(fmt.Sprint(80 + i))},
		})
	}
	n, err := acme.Write(ctx, "cars", events)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written", n)

	// Events pages through the answer, two events a request here.
	q := api.Query{From: start, To: start.Add(time.Hour), Series: "car-17", Limit: 2, Fields: []string{"speed"}}
	for e, err := range acme.Events(ctx, "cars", q) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.Time.Format(time.TimeOnly), e.Series, e.Fields["speed"])
	}

	agg, err := acme.Aggregate(ctx, "cars", api.AggregateQuery{From: start, To: start.Add(time.Hour - time.Nanosecond), Bucket: "1h", Fields: []string{"speed"}, Funcs: []string{"count", "avg"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range agg.Buckets {
		fmt.Println(b.Start.Format(time.RFC3339), b.Events, b.Values["speed"]["avg"])
	}
	// Output:
	// tenant acme key scope all
	// written 5
	// 12:00:00 car-17 80
	// 12:01:00 car-17 81
	// 12:02:00 car-17 82
	// 12:03:00 car-17 83
	// 12:04:00 car-17 84
	// 2017-04-10T12:00:00Z 5 82
}

// A refused write is an *Error with the server's reason for each bad
// event; nothing of the request is written.
func ExampleError() {
	url, stop := serve()
	defer stop()
	ctx := context.Background()
	admin, err := client.New(url, adminToken, nil)
	if err != nil {
		log.Fatal(err)
	}
	added, err := admin.AddTenant(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	acme, err := client.New(url, added.Key.Secret, nil)
	if err != nil {
		log.Fatal(err)
	}
	good := api.Event{Time: time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC), Fields: map[string]any{"speed": json.Number("88")}}
	bad := api.Event{Time: good.Time, Fields: map[string]any{"": json.Number("1")}}
	_, err = acme.Write(ctx, "cars", []api.Event{good, bad})
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code)
		for _, p := range e.Body.Problems {
			fmt.Println("event", p.Index, p.Reason)
		}
	}

	_, err = acme.Query(ctx, "trucks", api.Query{})
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Message)
	}
	// Output:
	// 400 invalid
	// event 1 fields: empty name
	// 404 not found timetable: logical table not found: "trucks"
}

// The admin token lists tenants and manages their keys.
func ExampleClient_RotateKey() {
	url, stop := serve()
	defer stop()
	ctx := context.Background()
	admin, err := client.New(url, adminToken, nil)
	if err != nil {
		log.Fatal(err)
	}
	added, err := admin.AddTenant(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	reader, err := admin.AddKey(ctx, "acme", api.ScopeRead)
	if err != nil {
		log.Fatal(err)
	}
	rotated, err := admin.RotateKey(ctx, "acme", added.Key.ID, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("old key", rotated.Old.State, "until", rotated.Old.Expires.Format(time.RFC3339))
	keys, err := admin.Keys(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprint(k.Scope, " ", k.State, " ", k.ID == reader.ID))
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// old key expiring until 2017-04-10T14:00:00Z
	// all expiring false
	// all live false
	// read live true
}

// Query reads a page at a time; a page's NextCursor asks for the next.
func ExampleClient_Query() {
	url, stop := serve()
	defer stop()
	ctx := context.Background()
	admin, err := client.New(url, adminToken, nil)
	if err != nil {
		log.Fatal(err)
	}
	added, err := admin.AddTenant(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	acme, err := client.New(url, added.Key.Secret, nil)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	var events []api.Event
	for i := range 5 {
		events = append(events, api.Event{Time: start.Add(time.Duration(i) * time.Second), Series: fmt.Sprint("car-", i%2), Fields: map[string]any{"i": json.Number(fmt.Sprint(i))}})
	}
	if _, err := acme.Write(ctx, "cars", events); err != nil {
		log.Fatal(err)
	}
	q := api.Query{From: start, To: start.Add(time.Minute), Desc: true, Limit: 2}
	for {
		page, err := acme.Query(ctx, "cars", q)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print("page:")
		for _, e := range page.Events {
			fmt.Print(" ", e.Series, "@", e.Time.Second(), "s")
		}
		fmt.Println()
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	// Output:
	// page: car-0@4s car-1@3s
	// page: car-0@2s car-1@1s
	// page: car-0@0s
}
