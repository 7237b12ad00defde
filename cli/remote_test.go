package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// testAdminToken is the admin token of the servers of these tests.
const testAdminToken = "an-admin-token-of-32-characters!"

// serveStore starts serve, with the admin token and the clock at testNow,
// on the Pebble store a --store flag names, until the test ends; it
// returns the server's URL once its first lifecycle cycle is done.
func serveStore(t *testing.T, store string) string {
	t.Helper()
	t.Setenv(EnvNow, testNow)
	t.Setenv(EnvAdminToken, testAdminToken)
	ctx, stop := context.WithCancel(context.Background())
	var logs syncWriter
	addr, served := startServe(t, ctx, strings.TrimPrefix(store, "--store=pebble:"), serveOptions{reconcileEvery: time.Hour}, &logs)
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-served)
	})
	url := "http://" + addr
	require.Eventually(t, func() bool {
		r := run(t, "", "--server", url, "reconcile", "--dry-run")
		return r.err == nil
	}, time.Minute, 10*time.Millisecond, "the server never answered")
	return url
}

// Every command that goes through a server prints what it prints on the
// store: the same store read first directly, then through serve.
func TestThroughServerPrintsAsTheStore(t *testing.T) {
	store, key := seeded(t)
	wide := []string{"--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z"}
	commands := [][]string{
		{"tenant", "list"},
		{"tenant", "list", "--format", "json"},
		{"tenant", "keys", "acme"},
		{"tenant", "keys", "acme", "--format", "json"},
		{"tables"},
		{"tables", "--format", "json"},
		{"tables", "--family", "events"},
		{"reconcile", "--dry-run"},
		{"reconcile", "--dry-run", "--format", "json"},
		append([]string{"query", "--format", "table"}, wide...),
		append([]string{"query", "--format", "json"}, wide...),
		append([]string{"query", "--format", "csv"}, wide...),
		append([]string{"query", "--format", "ndjson"}, wide...),
		append([]string{"query", "--series", "car-17", "--order", "desc", "--limit", "2", "--format", "csv"}, wide...),
		append([]string{"query", "--fields", "speed,note"}, wide...),
		append([]string{"query", "--series", "car-99", "--format", "json"}, wide...),
		append([]string{"query", "--filter", `speed >= 50 or begins_with(note, "no series")`, "--fields", "speed,note", "--format", "csv"}, wide...),
		append([]string{"query", "--bucket", "1d", "--fields", "speed", "--fn", "count,sum,avg,max,last"}, wide...),
		append([]string{"query", "--bucket", "1d", "--fields", "speed", "--fn", "count,sum,avg,max,last", "--format", "json"}, wide...),
		append([]string{"query", "--bucket", "1mo", "--fields", "speed", "--fn", "count,sum,avg", "--fill"}, wide...),
		append([]string{"query", "--bucket", "1mo", "--fields", "speed", "--fn", "count,max", "--filter", "speed < 50"}, wide...),
		append([]string{"query", "--bucket", "1mo", "--fields", "speed", "--fn", "count,max,p50", "--group-by", "series", "--format", "csv"}, wide...),
		append([]string{"query", "--bucket", "1mo", "--fields", "speed", "--fn", "count,max,p50", "--group-by", "series", "--format", "json"}, wide...),
		append([]string{"query", "--bucket", "1d", "--series", "car-99", "--format", "json"}, wide...),
	}
	local := make([]string, len(commands))
	for i, args := range commands {
		args = append(append([]string{}, args...), store)
		if args[0] == "query" {
			args = append(args, "--tenant", "acme")
		}
		local[i] = mustRun(t, "", args...).stdout
	}

	url := serveStore(t, store)
	t.Setenv(EnvAPIKey, key)
	for i, args := range commands {
		r := mustRun(t, "", append([]string{"--server", url}, args...)...)
		require.Equal(t, local[i], r.stdout, "timetable %s", strings.Join(args, " "))
	}
	// And the local path's golden files hold for the server's answers.
	r := mustRun(t, "", append([]string{"--server", url, "query", "--format", "json"}, wide...)...)
	goldenFile(t, "query/all.json", r.stdout)
	r = mustRun(t, "", append([]string{"--server", url, "tables"}, wide[:0]...)...)
	goldenFile(t, "tables/all.txt", r.stdout)

	// TIMETABLE_SERVER is --server's default.
	t.Setenv(EnvServer, url)
	r = mustRun(t, "", "tenant", "list")
	require.Equal(t, local[0], r.stdout)
}

// A user runs serve once, and does the rest from the CLI through it.
func TestThroughServerTenantsKeysWritesQueries(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	url := serveStore(t, store)
	srv := []string{"--server", url}
	cli := func(stdin string, args ...string) result { return run(t, stdin, append(srv, args...)...) }
	must := func(stdin string, args ...string) result { return mustRun(t, stdin, append(srv, args...)...) }

	r := must("", "tenant", "add", "acme")
	require.Regexp(t, regexp.MustCompile(`^tt_[A-Za-z0-9_-]{43}\n$`), r.stdout, "the key, alone on stdout")
	require.Contains(t, r.stderr, "cannot be shown again")
	key := strings.TrimSpace(r.stdout)
	r = cli("", "tenant", "add", "acme")
	require.ErrorContains(t, r.err, "tenant already exists")
	require.Equal(t, ExitFailure, ExitCode(r.err))
	r = cli("", "tenant", "add", "Not A Name")
	require.Equal(t, ExitUsage, ExitCode(r.err), "the server's 400: %v", r.err)

	// Writes go through the server, bad lines named and skipped as on
	// the store.
	t.Setenv(EnvAPIKey, key)
	in := `{"time": "2017-06-15T08:00:00Z", "series": "car-17", "fields": {"speed": 88.5}}
{"time": "yesterday"}
{"time": 1497513600000, "fields": {"speed": 12}}
`
	r = cli(in, "write", "--table", "cars", "--series", "car-1")
	require.Equal(t, ExitFailure, ExitCode(r.err))
	require.Contains(t, r.stderr, "line 2: time")
	require.Contains(t, r.stderr, "wrote 2 events to cars, 1 bad line,")
	r = must("", "query", "--table", "cars", "--from", "2017-06-15T00:00:00Z", "--to", testNow, "--format", "csv")
	require.Regexp(t, `(?m)^2017-06-15T08:00:00Z,car-1,[^,]+,12$`, r.stdout, "--series filled in")
	require.Regexp(t, `(?m)^2017-06-15T08:00:00Z,car-17,[^,]+,88.5$`, r.stdout)
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 3)

	// Keys: a read-only one, rotation, revocation.
	r = must("", "tenant", "add-key", "acme", "--scope", "read")
	reader := strings.TrimSpace(r.stdout)
	t.Setenv(EnvAPIKey, reader)
	r = cli(in[:strings.Index(in, "\n")+1], "write", "--table", "cars")
	require.ErrorContains(t, r.err, "is read-only")
	must("", "query", "--table", "cars", "--from", "0", "--to", testNow)

	r = cli("", "tenant", "rotate", "acme")
	require.Equal(t, ExitUsage, ExitCode(r.err))
	require.ErrorContains(t, r.err, "tenant acme has 2 live keys")
	var keys []keyRow
	require.NoError(t, json.Unmarshal([]byte(must("", "tenant", "keys", "acme", "--format", "json").stdout), &keys))
	require.Len(t, keys, 2)
	// Made at one instant (the clock is stopped), in id order.
	first, read := keys[0].ID, keys[1].ID
	if keys[0].Scope == "read" {
		first, read = read, first
	}
	r = must("", "tenant", "rotate", "acme", "--key", first, "--grace", "1h")
	rotated := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^tt_`, rotated)
	require.Contains(t, r.stderr, first+" works until 2017-06-15T10:00:00Z")
	for _, k := range []string{key, rotated} {
		t.Setenv(EnvAPIKey, k)
		must("", "query", "--table", "cars", "--from", "0", "--to", testNow)
	}
	r = must("", "tenant", "keys", "acme")
	require.Regexp(t, first+` +all +expiring +2017-06-15T09:00:00Z +2017-06-15T10:00:00Z\n`, r.stdout)
	require.Regexp(t, read+` +read +live +2017-06-15T09:00:00Z +-\n`, r.stdout)
	// Revoked, a key is refused at once, and the CLI says which.
	r = must("", "tenant", "revoke", "acme", read)
	require.Equal(t, "revoked key "+read+" of tenant acme at 2017-06-15T09:00:00Z\n", r.stdout)
	t.Setenv(EnvAPIKey, reader)
	r = cli("", "query", "--table", "cars", "--from", "0", "--to", testNow)
	require.ErrorContains(t, r.err, "the API key in TIMETABLE_API_KEY was refused by the server at "+url+": ")
	require.Equal(t, ExitFailure, ExitCode(r.err))

	// With one live key left (the other is expiring), rotate needs no
	// --key.
	r = must("", "tenant", "rotate", "acme")
	require.Regexp(t, `^tt_`, r.stdout)
	require.NotContains(t, r.stderr, first)

	// Removed, the tenant's keys are all refused; its events stay.
	r = must("", "tenant", "remove", "acme")
	require.Contains(t, r.stdout, "removed tenant acme")
	t.Setenv(EnvAPIKey, rotated)
	r = cli("", "query", "--table", "cars", "--from", "0", "--to", testNow)
	require.ErrorContains(t, r.err, "was refused")
	require.Equal(t, "NAME  CREATED\n", must("", "tenant", "list").stdout)
	r = cli("", "tenant", "keys", "acme")
	require.Equal(t, ExitFailure, ExitCode(r.err))
}

// The errors of the commands through a server: what is missing, what was
// refused, what does not go through a server.
func TestThroughServerErrors(t *testing.T) {
	store, key := seeded(t)
	url := serveStore(t, store)
	t.Setenv(EnvAPIKey, key)
	query := []string{"--server", url, "query", "--table", "a_table", "--from", "0", "--to", testNow}
	for _, tt := range []struct {
		env       map[string]string
		args      []string
		want      string
		exit      int
		wantUsage bool
	}{
		{map[string]string{EnvAdminToken: ""}, []string{"--server", url, "tenant", "list"}, "no admin token: set TIMETABLE_ADMIN_TOKEN", ExitUsage, true},
		{map[string]string{EnvAdminToken: "not-the-admin-token-but-long-enough"}, []string{"--server", url, "tables"}, "the admin token in TIMETABLE_ADMIN_TOKEN was refused by the server at " + url + ": bad admin token", ExitFailure, false},
		{map[string]string{EnvAPIKey: ""}, query, "no API key: set TIMETABLE_API_KEY", ExitUsage, true},
		{map[string]string{EnvAPIKey: "tt_wrong"}, query, "the API key in TIMETABLE_API_KEY was refused by the server at " + url + ": unknown API key", ExitFailure, false},
		{nil, append([]string{store}, query...), "the server owns its store", ExitUsage, true},
		{nil, append(query, "--tenant", "acme"), "--tenant: with --server the API key in TIMETABLE_API_KEY names the tenant", ExitUsage, true},
		{nil, []string{"--server", url, "reconcile"}, "the server runs the lifecycle itself", ExitUsage, true},
		{nil, []string{"--server", url, "reconcile", "--dry-run", "--now", testNow}, "the server plans at its own time", ExitUsage, true},
		{nil, []string{"--server", url, "serve"}, "timetable serve does not go through a server: it is the server", ExitUsage, true},
		{nil, []string{"--server", url, "archive", "list", "--target", "file:///tmp"}, "timetable archive list does not go through a server", ExitUsage, true},
		{nil, []string{"--server", "127.0.0.1:8080", "tenant", "list"}, `--server "127.0.0.1:8080": use the server's URL`, ExitUsage, true},
		{nil, []string{"--server", "http://127.0.0.1:1", "tenant", "list"}, "reach the server at http://127.0.0.1:1 (is `timetable serve` running there?)", ExitFailure, false},
		{nil, []string{"--server", url, "query", "--table", "nope", "--from", "0", "--to", testNow}, `timetable: logical table not found: "nope"`, ExitFailure, false},
		{nil, []string{"--server", url, "query", "--table", "a_table", "--from", "0", "--to", testNow, "--fields", "speed,,x"}, "--fields", ExitUsage, true},
		{nil, []string{"--server", url, "tenant", "rotate", "acme", "--grace", "0s"}, "--grace 0s: use a positive duration", ExitUsage, true},
	} {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			r := run(t, "", tt.args...)
			require.ErrorContains(t, r.err, tt.want)
			require.Equal(t, tt.exit, ExitCode(r.err), "%v", r.err)
			var out strings.Builder
			PrintError(&out, r.err)
			require.Equal(t, tt.wantUsage, strings.Contains(out.String(), "--help"))
		})
	}
}

// A write larger than a request is sent in several, and the events a
// request refuses are named by their index in the whole write.
func TestRemoteWriteSplitsRequests(t *testing.T) {
	store, key := seeded(t)
	url := serveStore(t, store)
	r := &remote{base: url, cred: apiKeyCredential, secret: key, client: http.DefaultClient, maxBodyBytes: 1 << 20, maxEvents: 2}
	var events []event.Event
	for i := range 5 {
		e := event.Event{Time: time.Date(2017, 6, 15, 8, 0, i, 0, time.UTC), Series: "s", Fields: map[string]any{"i": json.Number(itoa(int64(i)))}}
		if i == 3 {
			// Valid, and over what one item may hold: the engine refuses it.
			e.Fields["blob"] = strings.Repeat("x", 410<<10)
		}
		events = append(events, e)
	}
	batch, err := event.Check(events, event.Limits{}, time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	n, err := r.writeEvents(context.Background(), "split", batch)
	var be *event.BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 3, be.Problems[0].Index, "indexed in the write, not in its request")
	require.Equal(t, 2, n, "the first request was written")

	// Through the command, the line is named and the others written.
	var in strings.Builder
	for _, e := range events {
		b, err := e.AppendJSON(nil)
		require.NoError(t, err)
		in.Write(append(b, '\n'))
	}
	t.Setenv(EnvAPIKey, key)
	res := run(t, in.String(), "--server", url, "write", "--table", "split")
	require.Equal(t, ExitFailure, ExitCode(res.err))
	require.Contains(t, res.stderr, "line 4: ")
	require.Contains(t, res.stderr, "wrote 4 events to split, 1 bad line,")
}
