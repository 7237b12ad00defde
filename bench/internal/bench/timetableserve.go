package bench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
	"github.com/timetabledb/timetable/event"
)

// timetablePeer is `timetable serve` on Pebble, the binary `make build`
// makes, started as any peer is: NDJSON over HTTP in, the HTTP API's
// events and aggregates out. Its family is of layout layout (chunk or
// row, docs/layouts.md), set in a configuration file of its own, so
// that the column says which it is whatever the default. A packed peer
// (chunk layout) is asked its queries after `timetable compact` packed
// what the writes left (pack): the state of a table past its hot tier,
// beside the chunks as written, which the other chunk column measures.
type timetablePeer struct {
	bin    string
	layout string
	packed bool
	dir    string
	base   string
	header http.Header
	// api is the server's Go client, with the tenant's key; it sends
	// every request once, as the other peers' clients do.
	api *client.Client
	// adminToken opens the server's admin API, whose CPU profiles the
	// benchmark takes.
	adminToken string
	client     *http.Client
	d          *daemon
	// chunkWindow is the family's chunk_window, when it is of the chunk
	// layout; "" is the configuration's default.
	chunkWindow string
}

// name is "timetable" for the chunk layout, the table's first column,
// "timetable-packed" for the chunk layout queried packed, and
// "timetable-row" for the row layout; a chunk window other than the
// default is named beside it.
func (t *timetablePeer) name() string {
	name := "timetable"
	switch {
	case t.packed:
		name += "-packed"
	case t.layout != "chunk":
		name += "-" + t.layout
	}
	if t.chunkWindow != "" {
		name += " (" + t.chunkWindow + " windows)"
	}
	return name
}

func (t *timetablePeer) version() string {
	if t.packed {
		return "(this tree, " + t.layout + " layout, queried after `timetable compact`)"
	}
	return "(this tree, " + t.layout + " layout)"
}

func (*timetablePeer) durability() string { return "Pebble WAL synced per request" }
func (t *timetablePeer) dataDir() string  { return filepath.Join(t.dir, "data") }

// globals are the flags every command of the peer's binary takes: its
// store and its configuration.
func (t *timetablePeer) globals() []string {
	return []string{"--store=pebble:" + t.dataDir(), "--config=" + filepath.Join(t.dir, "timetable.yaml")}
}

func (t *timetablePeer) start(ctx context.Context, dir string, _ func(string)) (*daemon, error) {
	if t.bin == "" {
		return nil, fmt.Errorf("no timetable binary: give -timetable (make bench builds bin/timetable)")
	}
	bin, err := filepath.Abs(t.bin) // the daemon runs in dir
	if err != nil {
		return nil, err
	}
	t.bin, t.dir = bin, dir
	config := fmt.Sprintf("families:\n  - {name: events, layout: %s}\n", t.layout)
	if t.chunkWindow != "" {
		config = fmt.Sprintf("families:\n  - {name: events, layout: %s, chunk_window: %s}\n", t.layout, t.chunkWindow)
	}
	if err := os.WriteFile(filepath.Join(dir, "timetable.yaml"), []byte(config), 0o666); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, t.bin, append(t.globals(), "tenant", "add", benchTenant)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return nil, fmt.Errorf("tenant add: %w: %s", err, ee.Stderr)
	} else if err != nil {
		return nil, fmt.Errorf("tenant add: %w", err)
	}
	key := strings.TrimSpace(string(out))
	// The benchmark measures the server's ingest, not a tenant's default
	// write rate (100,000 events a second): the bench tenant's rates are
	// raised as an operator raises a heavy tenant's.
	raise := append(t.globals(), "tenant", "limits", benchTenant,
		"--write-events-per-second", "1000000000", "--write-events-burst", "1000000000",
		"--write-bytes-per-second", "100000000000", "--write-bytes-burst", "100000000000")
	if out, err := exec.CommandContext(ctx, t.bin, raise...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tenant limits: %w: %s", err, out)
	}
	t.header = http.Header{"Authorization": {"Bearer " + key}}
	return t.serve(ctx, key)
}

// serve starts `timetable serve` on the peer's store, with the tenant's
// key key, and waits until it is ready.
func (t *timetablePeer) serve(ctx context.Context, key string) (*daemon, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	t.adminToken = rand.Text()
	t.d, err = startDaemon("timetable", t.dir, syscall.SIGTERM, nil, []string{"TIMETABLE_ADMIN_TOKEN=" + t.adminToken}, t.bin, append(t.globals(), "--log-level=warn", "serve", "--addr="+addr)...)
	if err != nil {
		return nil, err
	}
	t.base = "http://" + addr
	t.client = peerHTTP()
	if t.api, err = client.New(t.base, key, &client.Options{HTTPClient: t.client, Attempts: 1}); err != nil {
		return nil, err
	}
	return t.d, t.d.waitReady(ctx, 30*time.Second, t.api.Ready)
}

// ping asks GET /healthz with the tenant's key, which it does not check:
// the request goes through the server's request log, metrics and
// routing as a query does, less the key's check (a cache hit) and the
// read.
func (t *timetablePeer) ping(ctx context.Context) error {
	return fetch(ctx, t.client, http.MethodGet, t.base+api.PathHealthz, t.header, nil, nil)
}

func (*timetablePeer) pingRequest() string {
	return "GET /healthz over HTTP/1.1 (JSON answer; through the request log, metrics and routing, without the key's check or a read)"
}

func (t *timetablePeer) write(readings []reading) func(context.Context) error {
	evs := make([]event.Event, len(readings))
	for i, r := range readings {
		evs[i] = r.event()
	}
	body := ndjson(evs)
	return func(ctx context.Context) error {
		_, err := t.api.WriteBody(ctx, workloadTable, api.MediaNDJSON, body)
		return err
	}
}

// profileWindow is the length of each CPU profile profileCPU takes.
const profileWindow = "1" // seconds

// profileCPU takes the server's CPU profiles back to back, a window at a
// time, until stop: the last window ends at most a window after stop is
// called, and stop waits for it.
func (t *timetablePeer) profileCPU(ctx context.Context) func() ([][]byte, error) {
	done := make(chan struct{})
	var profiles [][]byte
	var err error
	finished := make(chan struct{})
	header := http.Header{"Authorization": {"Bearer " + t.adminToken}}
	go func() {
		defer close(finished)
		for {
			var answer io.ReadCloser
			answer, err = send(ctx, t.client, http.MethodGet, t.base+"/v1/admin/debug/cpu?seconds="+profileWindow, header, nil)
			if err != nil {
				return
			}
			var prof []byte
			prof, err = io.ReadAll(answer)
			answer.Close()
			if err != nil {
				return
			}
			profiles = append(profiles, prof)
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	return func() ([][]byte, error) {
		close(done)
		<-finished
		return profiles, err
	}
}

// inclusive turns the end of a half-open range into the HTTP API's
// inclusive `to`.
func inclusive(to time.Time) string { return to.Add(-time.Nanosecond).Format(time.RFC3339Nano) }

func (t *timetablePeer) aggregate(ctx context.Context, series string, from, to time.Time) ([]bucket, error) {
	answer, err := t.api.Aggregate(ctx, workloadTable, api.AggregateQuery{From: from, To: to.Add(-time.Nanosecond), Series: series, Bucket: "1h",
		Fields: []string{aggregateField}, Funcs: []string{"count", "sum"}})
	if err != nil {
		return nil, err
	}
	out := make([]bucket, len(answer.Buckets))
	for i, b := range answer.Buckets {
		sum, err := result(b.Values[aggregateField]["sum"]).Float64()
		if err != nil {
			return nil, fmt.Errorf("aggregate: sum: %w", err)
		}
		count, err := result(b.Values[aggregateField]["count"]).Int64()
		if err != nil {
			return nil, fmt.Errorf("aggregate: count: %w", err)
		}
		out[i] = bucket{Start: b.Start, Count: int(count), Sum: sum}
	}
	return out, nil
}

// result returns an aggregate's result as the number it is.
func result(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}

// events reads the times of a query's events. It decodes only the times,
// not through package client, which decodes every field of every event:
// the benchmark's share of a query's latency stays what it is for the
// other peers.
func (t *timetablePeer) events(ctx context.Context, q url.Values) ([]time.Time, error) {
	var answer struct {
		Events []struct{ Time time.Time }
	}
	if err := fetch(ctx, t.client, http.MethodGet, t.base+"/v1/tables/"+workloadTable+"/events?"+q.Encode(), t.header, nil, &answer); err != nil {
		return nil, err
	}
	out := make([]time.Time, len(answer.Events))
	for i, e := range answer.Events {
		out[i] = e.Time
	}
	return out, nil
}

func (t *timetablePeer) latest(ctx context.Context, series string, from, to time.Time, n int) ([]time.Time, error) {
	return t.events(ctx, url.Values{"series": {series}, "from": {from.Format(time.RFC3339Nano)}, "to": {inclusive(to)}, "order": {"desc"}, "limit": {fmt.Sprint(n)}})
}

func (t *timetablePeer) between(ctx context.Context, series string, from, to time.Time) ([]time.Time, error) {
	return t.events(ctx, url.Values{"series": {series}, "from": {from.Format(time.RFC3339Nano)}, "to": {inclusive(to)}})
}

// flush stops the server, which closes its store, and runs `timetable
// compact` on the store: Pebble's memtables, which the server leaves in
// its WAL, go to sstables, and all of them to the bottom level, as an
// operator who wants to know what the data take would do.
func (t *timetablePeer) flush(ctx context.Context) error {
	if err := t.d.Stop(); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, t.bin, append(t.globals(), "compact")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("timetable compact: %w: %s", err, out)
	}
	return nil
}

// pack, for a packed peer, flushes the store (stopping the server and
// running `timetable compact`, which packs the chunks the writes left)
// and serves it again, returning the new server; other peers are left
// as they are (nil).
func (t *timetablePeer) pack(ctx context.Context) (*daemon, error) {
	if !t.packed {
		return nil, nil
	}
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	if t.client != nil {
		t.client.CloseIdleConnections()
	}
	key := strings.TrimPrefix(t.header.Get("Authorization"), "Bearer ")
	return t.serve(ctx, key)
}

func (t *timetablePeer) close() {
	if t.client != nil {
		t.client.CloseIdleConnections()
	}
}
