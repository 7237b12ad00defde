package server_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/tenant"
)

var cursor = regexp.MustCompile(`"next_cursor":"[^"]+"`)

func Example() {
	ctx := context.Background()
	store, err := pebblestore.Open("", pebblestore.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	now := time.Date(2017, 4, 10, 13, 0, 0, 0, time.UTC)
	db, err := engine.Open(ctx, store, engine.Options{Clock: clock.NewManual(now)})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	key, err := tenants.Add(ctx, "acme", now)
	if err != nil {
		log.Fatal(err)
	}
	handler, err := server.New(db, server.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	call := func(method, path, contentType, body string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contentType)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer res.Body.Close()
		answer, _ := io.ReadAll(res.Body)
		// A cursor is opaque, and signed with a key of the store.
		answer = cursor.ReplaceAll(answer, []byte(`"next_cursor":"..."`))
		fmt.Print(res.StatusCode, " ", string(answer))
	}
	call("POST", "/v1/tables/a_table/events", "application/x-ndjson",
		`{"time": "2017-04-10T12:00:00.123456Z", "series": "car-17", "id": "e1", "fields": {"speed": 88.5, "gear": "D"}}
{"time": 1491825660000, "series": "car-17", "id": "e2", "fields": {"speed": 90}}`)
	call("POST", "/v1/tables/a_table/events", "application/json", `[{"time": "noon"}]`)
	call("GET", "/v1/tables/a_table/events?series=car-17&order=desc&limit=1", "", "")
	// Output:
	// 200 {"written":2}
	// 400 {"error":"timetable: invalid event: 1 bad event: event 0: time: not RFC 3339 or Unix milliseconds","problems":[{"index":0,"reason":"time: not RFC 3339 or Unix milliseconds"}]}
	// 200 {"events":[{"time":"2017-04-10T12:01:00Z","series":"car-17","id":"e2","fields":{"speed":90}}],"next_cursor":"..."}
}
