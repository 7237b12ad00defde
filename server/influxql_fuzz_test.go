package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/tenant"
)

// fuzzInputTimeout bounds the time one input of FuzzInfluxQuery may
// take: far above what any takes, a hang's bound rather than a measure.
const fuzzInputTimeout = 20 * time.Second

// Whatever the statements, /query answers 200 with InfluxDB's JSON, a
// statement's failure in its result, 400 for what does not parse or is
// past a bound, or 413 naming max_query_partitions for answers past what
// the query budget may ever hold: never a 500, never a panic, and within
// fuzzInputTimeout. scripts/test.sh runs it for a few seconds.
func FuzzInfluxQuery(f *testing.F) {
	for _, q := range []string{
		"SHOW DATABASES", "SHOW MEASUREMENTS LIMIT 1", `SHOW TAG VALUES FROM weather WITH KEY = "host" WHERE region =~ /e/`,
		"SHOW FIELD KEYS; SHOW SERIES WHERE host != 'a'",
		`SELECT mean("temp") FROM "weather" WHERE "region" = 'eu' AND time >= 1497510000000ms and time <= 1497513600000ms GROUP BY time(1m), "host" fill(null)`,
		"SELECT derivative(max(temp), 1s), moving_average(mean(temp), 3) FROM weather WHERE time > now() - 1d GROUP BY time(1h) fill(linear)",
		"SELECT * FROM /w.*/ WHERE temp > 3 OR note = 'x' ORDER BY time DESC LIMIT 3 OFFSET 1 SLIMIT 2 tz('Europe/Paris')",
		"SELECT count(distinct(note)), percentile(temp, 99), spread(temp) FROM weather GROUP BY *",
		"DROP SERIES FROM weather", "SELECT temp FROM weather WHERE time > '2017-06-15T07:00:00Z' AND host =~ /(/",
		"SELECT stddev(temp), median(temp), percentile(temp, 99.9) FROM weather WHERE host = 'web1' GROUP BY time(1h, -15m)",
		"SELECT max(temp) FROM weather WHERE time > now() - 1d GROUP BY time(30m, now()) fill(previous)",
		"SELECT first(temp) FROM weather WHERE temp > 3",
		// Inputs that once broke /query: an OFFSET that overflowed, a LIMIT
		// past int64, a WHERE that held a core for seconds, a time()
		// of no length, no statement.
		"SELECT temp FROM weather OFFSET 9223372036854775807",
		"SELECT temp FROM weather LIMIT 9223372036854775808",
		"SELECT temp FROM weather WHERE " + strings.TrimSuffix(strings.Repeat("temp > 1 AND ", 10_000), " AND "),
		"SELECT temp FROM weather WHERE " + strings.Repeat("(", 10_000) + "temp > 1" + strings.Repeat(")", 10_000),
		"SELECT count(temp) FROM weather WHERE time > now() - 1d GROUP BY time(0s)",
		";",
		"SELECT * / 2 FROM weather WHERE host =~ /'/ AND (temp > 1)",
	} {
		f.Add(q, "ms")
	}
	ctx := context.Background()
	t0 := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	store, err := pebblestore.Open(f.TempDir(), pebblestore.Options{})
	if err != nil {
		f.Fatal(err)
	}
	db, err := engine.Open(ctx, store, engine.Options{Schema: family.DefaultSchema(), Clock: clock.NewManual(t0)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close(); store.Close() })
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	key, err := tenants.Add(ctx, "acme", t0)
	if err != nil {
		f.Fatal(err)
	}
	h, err := server.New(db, server.Options{TenantDirectory: tenants})
	if err != nil {
		f.Fatal(err)
	}
	body := "weather,host=web1,region=eu temp=1,note=\"a\" 1497510000000000000\nweather,host=web2,region=us temp=2 1497510060000000000\nother v=1 1497510000000000000\n"
	req := httptest.NewRequest("POST", "/write", strings.NewReader(body))
	req.Header.Set("Authorization", "Token "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent {
		f.Fatalf("write: %d %s", rec.Code, rec.Body)
	}
	f.Fuzz(func(t *testing.T, q, epoch string) {
		ctx, cancel := context.WithTimeout(ctx, fuzzInputTimeout)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, "GET", "/query?"+url.Values{"q": {q}, "epoch": {epoch}, "db": {"x"}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if ctx.Err() != nil {
			t.Fatalf("%q: not answered within %s", q, fuzzInputTimeout)
		}
		switch rec.Code {
		case http.StatusOK:
			var out api.InfluxQLResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("%q: %v: %s", q, err, rec.Body)
			}
		case http.StatusBadRequest:
		case http.StatusRequestEntityTooLarge:
			// Answers past what the query budget may ever hold,
			// refused naming the limit.
			if !strings.Contains(rec.Body.String(), "max_query_partitions") {
				t.Fatalf("%q: status 413 naming no limit: %s", q, rec.Body)
			}
		default:
			t.Fatalf("%q: status %d: %s", q, rec.Code, rec.Body)
		}
	})
}
