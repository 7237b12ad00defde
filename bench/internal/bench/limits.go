package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/timetabledb/timetable/internal/clients"
)

// limitsGOMEMLIMIT is the soft memory limit of the server the limits part
// starts: a deployment of 512 MiB less Pebble's two 64 MiB memtables,
// which are off the Go heap (docs/operations.md).
const limitsGOMEMLIMIT = "352MiB"

// Limits measures, on the server binary (`timetable serve` on Pebble),
// what no client may take from the others: the server's peak resident
// memory under 64 concurrent requests of 100,000 minimal events, under 16
// bodies of 15 MiB, and under one MQTT message of 2,000,000 events, each
// on a fresh server, every acknowledged event counted back; another
// tenant's latest-10 p99 while one tenant runs 200 writers and four
// aggregates of every series; and another tenant's small writes while one
// tenant's slow uploads hold what they may.
func Limits(ctx context.Context, o Options, r *Report) error {
	if o.Timetable == "" {
		return fmt.Errorf("limits: no timetable binary: give -timetable (make bench builds bin/timetable)")
	}
	dir := filepath.Join(o.Dir, "limits")
	for _, load := range []struct {
		name             string
		requests, events int
		pad              int
	}{
		{"64 concurrent requests of 100,000 minimal events", 64, 100_000, 0},
		{"16 concurrent bodies of 15 MiB", 16, 91_980, 100},
	} {
		peak, acked, err := limitsMemoryHTTP(ctx, o.Timetable, filepath.Join(dir, fmt.Sprintf("http-%d", load.requests)), load.requests, load.events, load.pad)
		if err != nil {
			return fmt.Errorf("limits: %s: %w", load.name, err)
		}
		o.Progress(fmt.Sprintf("%s: %d events acknowledged and stored, peak RSS %.0f MiB", load.name, acked, peak))
		r.Rows = append(r.Rows, Row{Figure: "peak RSS, " + load.name + " (server, GOMEMLIMIT=" + limitsGOMEMLIMIT + ")", Value: peak, Unit: "MiB", Aim: "<= 512 MiB"})
	}
	peak, err := limitsMemoryMQTT(ctx, o.Timetable, filepath.Join(dir, "mqtt"), 2_000_000)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		r.Notes = append(r.Notes, "the MQTT memory row skipped: mosquitto is not installed (scripts/install-clients.sh installs it)")
	case err != nil:
		return fmt.Errorf("limits: MQTT: %w", err)
	default:
		o.Progress(fmt.Sprintf("one MQTT message of 2,000,000 events: peak RSS %.0f MiB", peak))
		r.Rows = append(r.Rows, Row{Figure: "peak RSS, one MQTT message of 2,000,000 events (server, GOMEMLIMIT=" + limitsGOMEMLIMIT + ")", Value: peak, Unit: "MiB", Aim: "<= 512 MiB"})
	}
	noisy, err := limitsNoisyTenant(ctx, filepath.Join(dir, "noisy"), o)
	if err != nil {
		return fmt.Errorf("limits: noisy tenant: %w", err)
	}
	r.Rows = append(r.Rows,
		Row{Figure: "other tenant's latest-10 p99 while one tenant runs 200 writers and 4 aggregates of every series (its client, a process of its own)", Value: noisy.busy, Unit: "ms",
			Baseline: "same on a quiet server", Base: noisy.quiet, Aim: "< 10 ms"},
		Row{Figure: "same, server side (timetable_http_request_duration_seconds)", Value: noisy.busyServer, Unit: "ms",
			Baseline: "same on a quiet server", Base: noisy.quietServer, Aim: "< 10 ms"},
		Row{Figure: "same, the other tenant's client's own wake-up delay (its ticks)", Value: noisy.wake, Unit: "ms"},
		Row{Figure: "the server's goroutines' wait for a core meanwhile, p99 (go_sched_latencies_seconds)", Value: noisy.busySched, Unit: "ms",
			Baseline: "same on a quiet server", Base: noisy.quietSched},
		Row{Figure: "the server's GC pauses meanwhile (go_sched_pauses_total_gc_seconds)", Value: noisy.gcPauses, Unit: "/s"},
		Row{Figure: "the noisy tenant's aggregates of every series meanwhile", Value: noisy.aggregates, Unit: "/s"},
		Row{Figure: "the noisy tenant's events written meanwhile", Value: noisy.events, Unit: "ev/s"})
	r.Notes = append(r.Notes, "the other tenant's latest-10 reads are made by a process of their own (the bench's binary run again, one goroutine, one read every 5 ms) while the noisy tenant's 200 writers and 4 aggregates run in the bench's process: "+
		"the client side is the p99 of the times that process saw, and includes its own wait for a core (its wake-up delay), since both processes and the server share the machine's cores; "+
		"the server side is the p99 of the server's request duration histogram of those reads (interpolated within its bucket as histogram_quantile does), which starts when the handler does: "+
		"the wait for the server to notice the request and give it a core is between the two, and the server's scheduler latency is that wait over all its goroutines, the noisy tenant's too")
	ok, sent, err := limitsSlowUploads(ctx, filepath.Join(dir, "slow"), o)
	if err != nil {
		return fmt.Errorf("limits: slow uploads: %w", err)
	}
	r.Rows = append(r.Rows, Row{Figure: "other tenant's small writes that succeed while one tenant's 5 slow uploads of 16 MiB hold its share (server)", Value: float64(ok), Unit: "writes",
		Baseline: "writes sent", Base: float64(sent), Aim: "all"})
	return nil
}

// limitsServer is `timetable serve` on Pebble in a directory of its own,
// with two tenants.
type limitsServer struct {
	bin, dir, base string
	keys           map[string]string
	d              *daemon
	client         *http.Client
}

// startLimitsServer adds the tenants, runs raise (tenant limits flags)
// for the first, and serves with config as the configuration file.
func startLimitsServer(ctx context.Context, bin, dir, config string, tenants []string, raise ...string) (*limitsServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	s := &limitsServer{bin: bin, dir: dir, keys: map[string]string{}}
	store := "--store=pebble:" + filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "timetable.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		return nil, err
	}
	for _, t := range tenants {
		out, err := exec.CommandContext(ctx, bin, store, "tenant", "add", t).Output()
		if err != nil {
			return nil, fmt.Errorf("tenant add %s: %w", t, err)
		}
		s.keys[t] = strings.TrimSpace(string(out))
	}
	if len(raise) > 0 {
		args := append([]string{store, "tenant", "limits", tenants[0]}, raise...)
		if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tenant limits: %w: %s", err, out)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s.d, err = startDaemon("timetable", dir, syscall.SIGTERM, nil, []string{"GOMEMLIMIT=" + limitsGOMEMLIMIT, "TIMETABLE_ADMIN_TOKEN=" + rand.Text()},
		bin, store, "--config="+cfg, "--log-level=warn", "serve", "--addr="+addr)
	if err != nil {
		return nil, err
	}
	s.base = "http://" + addr
	s.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	ready := func(ctx context.Context) error {
		return fetch(ctx, s.client, http.MethodGet, s.base+"/readyz", nil, nil, nil)
	}
	if err := s.d.waitReady(ctx, 30*time.Second, ready); err != nil {
		s.d.Stop()
		return nil, err
	}
	return s, nil
}

// peakRSS returns the server's peak resident memory in MiB.
func (s *limitsServer) peakRSS() (float64, error) {
	b, err := s.d.PeakMemory()
	return float64(b) / (1 << 20), err
}

func (s *limitsServer) stop() error {
	s.client.CloseIdleConnections()
	return s.d.Stop()
}

// post sends a body of events to a tenant's table and returns the
// status and the events written.
func (s *limitsServer) post(ctx context.Context, tenant, table string, body io.Reader) (int, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v1/tables/"+table+"/events", body)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.keys[tenant])
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := s.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return res.StatusCode, 0, err
	}
	var w struct{ Written int }
	return res.StatusCode, w.Written, json.Unmarshal(b, &w)
}

// count returns a tenant's events in a table from from on, by an
// aggregate.
func (s *limitsServer) count(ctx context.Context, tenant, table string, from time.Time) (int64, error) {
	q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {time.Now().Format(time.RFC3339Nano)}, "bucket": {"24h"}, "fn": {"count"}}
	var answer struct {
		Buckets []struct{ Events int64 }
	}
	if err := fetch(ctx, s.client, http.MethodGet, s.base+"/v1/tables/"+table+"/aggregate?"+q.Encode(), http.Header{"Authorization": {"Bearer " + s.keys[tenant]}}, nil, &answer); err != nil {
		return 0, err
	}
	var n int64
	for _, b := range answer.Buckets {
		n += b.Events
	}
	return n, nil
}

// unlimited are the flags of `timetable tenant limits` that lift a
// tenant's write rates and concurrent writes: the memory loads measure
// the budgets, not a tenant's limits.
var unlimited = []string{"--write-events-per-second", "1000000000", "--write-events-burst", "1000000000",
	"--write-bytes-per-second", "100000000000", "--write-bytes-burst", "100000000000", "--max-concurrent-writes", "1000"}

// limitsMemoryHTTP sends requests concurrent requests of events each
// (pad bytes of a field each when pad > 0) to a fresh server, each sent
// again after a 503 or 429 as Retry-After asks, and returns the server's
// peak RSS and the events acknowledged, once it has counted them back.
func limitsMemoryHTTP(ctx context.Context, bin, dir string, requests, events, pad int) (float64, int, error) {
	s, err := startLimitsServer(ctx, bin, dir, "limits:\n  tenant_share: 1\n", []string{benchTenant}, unlimited...)
	if err != nil {
		return 0, 0, err
	}
	defer s.stop()
	base := time.Now().Add(-6 * time.Hour).Truncate(time.Millisecond)
	written := make([]int, requests)
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for r := range requests {
		wg.Go(func() {
			for range 1000 {
				status, n, err := s.post(ctx, benchTenant, "memory", &generatedBody{base: base, first: r * events, n: events, pad: pad})
				switch {
				case ctx.Err() != nil:
					return
				case err != nil || status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
					// Not acknowledged: sent again, the same events.
					time.Sleep(100 * time.Millisecond)
				case status == http.StatusOK:
					written[r] = n
					return
				default:
					err := fmt.Errorf("request %d: status %d", r, status)
					failed.Store(&err)
					return
				}
			}
		})
	}
	wg.Wait()
	if p := failed.Load(); p != nil {
		return 0, 0, *p
	}
	acked := 0
	for _, n := range written {
		acked += n
	}
	if acked != requests*events {
		return 0, 0, fmt.Errorf("%d of %d events acknowledged after 1,000 tries each", acked, requests*events)
	}
	peak, err := s.peakRSS()
	if err != nil {
		return 0, 0, err
	}
	stored, err := s.count(ctx, benchTenant, "memory", base)
	if err != nil {
		return 0, 0, err
	}
	if stored != int64(acked) {
		return 0, 0, fmt.Errorf("%d events acknowledged, %d stored", acked, stored)
	}
	return peak, acked, nil
}

// generatedBody is NDJSON of n events, one a millisecond from event
// first on after base, made as it is read so that the benchmark's own
// memory stays small.
type generatedBody struct {
	base             time.Time
	first, n, pad, i int
	buf              bytes.Buffer
}

func (b *generatedBody) Read(p []byte) (int, error) {
	for b.buf.Len() < len(p) && b.i < b.n {
		k := b.first + b.i
		ms := b.base.Add(time.Duration(k) * time.Millisecond).UnixMilli()
		if b.pad > 0 {
			fmt.Fprintf(&b.buf, `{"time":%d,"series":"s%02d","fields":{"v":1%07d,"pad":"%0*d"}}`+"\n", ms, k%16, k, b.pad, k)
		} else {
			fmt.Fprintf(&b.buf, `{"time":%d,"series":"s%02d"}`+"\n", ms, k%16)
		}
		b.i++
	}
	if b.buf.Len() == 0 {
		return 0, io.EOF
	}
	return b.buf.Read(p)
}

// limitsMemoryMQTT publishes one message of events minimal events to a
// fresh server's subscription through mosquitto, then one small message,
// and returns the server's peak RSS once the small one is written. It
// returns an error wrapping exec.ErrNotFound without mosquitto.
func limitsMemoryMQTT(ctx context.Context, bin, dir string, events int) (float64, error) {
	var pub string
	path, err := exec.LookPath("mosquitto")
	if err == nil {
		pub, err = exec.LookPath("mosquitto_pub")
	}
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "broker"), 0o700); err != nil {
		return 0, err
	}
	b, err := clients.StartMosquitto(path, filepath.Join(dir, "broker"))
	if err != nil {
		return 0, err
	}
	defer b.Close()
	huge := filepath.Join(dir, "huge.ndjson")
	f, err := os.Create(huge)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	ms := time.Now().Add(-time.Hour).UnixMilli()
	for i := range events {
		fmt.Fprintf(w, `{"time":%d,"series":"s%02d"}`+"\n", ms+int64(i), i%16)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return 0, err
	}
	config := fmt.Sprintf("mqtt:\n  - broker: %s\n    topic: plant/+/telemetry\n    tenant: %s\n    table: telemetry\n    series: 2\n    format: json\n", b.URL, benchTenant)
	s, err := startLimitsServer(ctx, bin, filepath.Join(dir, "server"), config, []string{benchTenant}, unlimited...)
	if err != nil {
		return 0, err
	}
	defer s.stop()
	publish := func(args ...string) error {
		out, err := exec.CommandContext(ctx, pub, append([]string{"-h", "127.0.0.1", "-p", fmt.Sprint(b.Port), "-q", "1", "-t", "plant/dev1/telemetry"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mosquitto_pub: %w: %s", err, out)
		}
		return nil
	}
	if err := publish("-f", huge); err != nil {
		return 0, err
	}
	after := time.Now().Add(-time.Minute)
	if err := publish("-m", fmt.Sprintf(`{"time":%d,"fields":{"v":1}}`, time.Now().UnixMilli())); err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		n, err := s.count(ctx, benchTenant, "telemetry", after)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the message after the huge one not written within 2 minutes (%d events, %v)", n, err)
		}
	}
	return s.peakRSS()
}

// noisy are the noisy tenant's writers and aggregates.
const (
	noisyWriters    = 200
	noisyAggregates = 4
	noisySeries     = 20_000
	quietSeries     = 100
)

// noisyFigures are the figures of limitsNoisyTenant.
type noisyFigures struct {
	// busy and quiet are the other tenant's latest-10 p99 in ms as its
	// client sees it, busyServer and quietServer as the server's request
	// duration histogram does.
	busy, quiet, busyServer, quietServer float64
	// busySched and quietSched are the p99 of how long the server's
	// goroutines waited for a core, in ms.
	busySched, quietSched float64
	// gcPauses is the server's GC pauses a second while busy, gcPause
	// their p99 in ms.
	gcPauses, gcPause float64
	// wake is the p99 of how late the client's reader woke while busy,
	// in ms.
	wake float64
	// aggregates and events are what the noisy tenant got answered
	// meanwhile, per second.
	aggregates, events float64
}

// limitsNoisyTenant measures another tenant's latest-10 p99 on a fresh
// server with the default limits, quiet and while one tenant runs 200
// writers and four aggregates of every series of a table of 20,000
// series, and what the noisy tenant got done meanwhile.
func limitsNoisyTenant(ctx context.Context, dir string, o Options) (f noisyFigures, err error) {
	s, err := startLimitsServer(ctx, o.Timetable, dir, "", []string{benchTenant, otherTenant})
	if err != nil {
		return f, err
	}
	defer s.stop()
	base := time.Now().Add(-3 * time.Hour).Truncate(time.Millisecond)
	// The noisy table: 20,000 series of 5 events, written as any client
	// would, within the tenant's default rate.
	for first := 0; first < noisySeries*5; first += 10_000 {
		var body bytes.Buffer
		for k := first; k < first+10_000; k++ {
			fmt.Fprintf(&body, `{"time":%d,"series":"dev-%05d","fields":{"v":%d}}`+"\n", base.Add(time.Duration(k)*time.Millisecond).UnixMilli(), k%noisySeries, k)
		}
		if err := s.postUntilDone(ctx, benchTenant, "noisy", body.Bytes()); err != nil {
			return f, err
		}
	}
	var body bytes.Buffer
	for k := range quietSeries * 20 {
		fmt.Fprintf(&body, `{"time":%d,"series":"dev-%03d","fields":{"v":%d}}`+"\n", base.Add(time.Duration(k)*time.Second).UnixMilli(), k%quietSeries, k)
	}
	if err := s.postUntilDone(ctx, otherTenant, "quiet", body.Bytes()); err != nil {
		return f, err
	}
	// The reads come one every 5 ms, as a dashboard's would, so that the
	// busy ones span ten seconds of the noisy tenant's load, not the
	// second that 2,000 reads back to back take; they are made by a
	// process of their own (runQuietReader), as another tenant's client
	// would make them, not by a goroutine beside the noisy tenant's.
	reads := quietReads{
		Events:   s.base + "/v1/tables/quiet/events",
		Query:    url.Values{"from": {base.Format(time.RFC3339Nano)}, "order": {"desc"}, "limit": {"10"}},
		Key:      s.keys[otherTenant],
		Series:   quietSeries,
		Reads:    2000,
		Interval: 5 * time.Millisecond,
		Window:   time.Minute,
	}
	var wakes []time.Duration
	p99 := func(window time.Duration) (float64, error) {
		reads.Window = window
		a, err := runQuietReader(ctx, reads)
		if err != nil {
			return 0, err
		}
		slices.Sort(a.Reads)
		wakes = a.Wakes
		return percentile(a.Reads, 99), nil
	}
	// The server's histograms of these reads (the other tenant's only:
	// the noisy one reads none), of its goroutines' waits for a core and
	// of its GC's pauses, before and after each of the two.
	h0, err := s.histograms(ctx)
	if err != nil {
		return f, err
	}
	if f.quiet, err = p99(time.Minute); err != nil {
		return f, err
	}
	h1, err := s.histograms(ctx)
	if err != nil {
		return f, err
	}

	nctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	measuring := false // answers counted from when the other tenant reads
	record := func(what string, status int) {
		mu.Lock()
		if measuring {
			answers[fmt.Sprintf("%s %d", what, status)]++
		}
		mu.Unlock()
	}
	for w := range noisyWriters {
		wg.Go(func() {
			for i := 0; nctx.Err() == nil; i++ {
				var b bytes.Buffer
				for k := range 50 {
					fmt.Fprintf(&b, `{"time":%d,"series":"w%03d","fields":{"v":%d}}`+"\n", base.Add(time.Hour+time.Duration(i*50+k)*time.Millisecond).UnixMilli(), w, k)
				}
				status, _, err := s.post(nctx, benchTenant, "noisy-writes", &b)
				if err != nil {
					continue
				}
				record("write", status)
			}
		})
	}
	agg := url.Values{"from": {base.Format(time.RFC3339Nano)}, "bucket": {"1h"}, "fn": {"count,sum"}, "fields": {"v"}}
	for range noisyAggregates {
		wg.Go(func() {
			for nctx.Err() == nil {
				req, err := http.NewRequestWithContext(nctx, http.MethodGet, s.base+"/v1/tables/noisy/aggregate?"+agg.Encode(), nil)
				if err != nil {
					return
				}
				req.Header.Set("Authorization", "Bearer "+s.keys[benchTenant])
				res, err := s.client.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				record("aggregate", res.StatusCode)
			}
		})
	}
	// The noisy tenant's load gets going, then the quiet one reads for
	// 20 seconds at most.
	time.Sleep(2 * time.Second)
	h2, err := s.histograms(ctx)
	if err != nil {
		return f, err
	}
	mu.Lock()
	measuring = true
	mu.Unlock()
	began := time.Now()
	f.busy, err = p99(20 * time.Second)
	slices.Sort(wakes)
	f.wake = percentile(wakes, 99)
	mu.Lock()
	measuring = false
	mu.Unlock()
	took := time.Since(began).Seconds()
	h3, herr := s.histograms(ctx)
	stop()
	wg.Wait()
	if err = errors.Join(err, herr); err != nil {
		return f, err
	}
	quiet, busy := h1.since(h0), h3.since(h2)
	f.quietServer, f.busyServer = quiet.reads.quantile(0.99)*1000, busy.reads.quantile(0.99)*1000
	f.quietSched, f.busySched = quiet.sched.quantile(0.99)*1000, busy.sched.quantile(0.99)*1000
	f.gcPauses, f.gcPause = busy.gc[math.Inf(1)]/took, busy.gc.quantile(0.99)*1000
	f.aggregates = float64(answers["aggregate 200"]) / took
	f.events = float64(answers["write 200"]*50) / took
	o.Progress(fmt.Sprintf("other tenant's latest-10 p99 %.3f ms, server side %.3f ms, server's scheduling p99 %.3f ms, its GC %.1f pauses/s p99 %.3f ms, reader's wake-up delay %.3f ms (quiet %.3f ms, %.3f ms, %.3f ms) while the noisy tenant got %v in %.1f s",
		f.busy, f.busyServer, f.busySched, f.gcPauses, f.gcPause, f.wake, f.quiet, f.quietServer, f.quietSched, answers, took))
	return f, nil
}

// serverHistograms are the server's histograms that the noisy tenant's
// figures come from.
type serverHistograms struct{ reads, sched, gc histogram }

func (s *limitsServer) histograms(ctx context.Context) (h serverHistograms, err error) {
	if h.reads, err = s.readSeconds(ctx); err != nil {
		return h, err
	}
	if h.sched, err = s.schedSeconds(ctx); err != nil {
		return h, err
	}
	h.gc, err = s.gcPauseSeconds(ctx)
	return h, err
}

func (h serverHistograms) since(before serverHistograms) serverHistograms {
	return serverHistograms{h.reads.since(before.reads), h.sched.since(before.sched), h.gc.since(before.gc)}
}

// histogram is the cumulative buckets of a Prometheus histogram: the
// count of observations at most each upper bound, in seconds.
type histogram map[float64]float64

// readSeconds returns the server's histogram of the durations of reads
// of events answered 200 (empty before the first).
func (s *limitsServer) readSeconds(ctx context.Context) (histogram, error) {
	return s.histogram(ctx, "timetable_http_request_duration_seconds", `method="get"`, `route="/v1/tables/{table}/events"`, `code="200"`)
}

// schedSeconds returns the server's histogram of how long its goroutines
// waited for a core (Go's /sched/latencies:seconds).
func (s *limitsServer) schedSeconds(ctx context.Context) (histogram, error) {
	return s.histogram(ctx, "go_sched_latencies_seconds")
}

// gcPauseSeconds returns the server's histogram of its GC's
// stop-the-world pauses.
func (s *limitsServer) gcPauseSeconds(ctx context.Context) (histogram, error) {
	return s.histogram(ctx, "go_sched_pauses_total_gc_seconds")
}

// histogram returns the server's histogram name, of the series whose
// labels hold each of labels.
func (s *limitsServer) histogram(ctx context.Context, name string, labels ...string) (histogram, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	text, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	h := histogram{}
lines:
	for line := range strings.Lines(string(text)) {
		have, value, ok := strings.Cut(strings.TrimSpace(line), "} ")
		if !ok || !strings.HasPrefix(have, name+"_bucket{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(have, l) {
				continue lines
			}
		}
		_, le, _ := strings.Cut(have, `le="`)
		le, _, _ = strings.Cut(le, `"`)
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: bucket %q: %w", le, err)
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", line, err)
		}
		h[bound] += n
	}
	if len(h) == 0 && len(labels) == 0 {
		return nil, fmt.Errorf("metrics: no histogram %s", name)
	}
	return h, nil
}

// since returns the observations of h that were not yet in before.
func (h histogram) since(before histogram) histogram {
	d := histogram{}
	for le, n := range h {
		d[le] = n - before[le]
	}
	return d
}

// quantile returns the q quantile of h in seconds, interpolated within
// its bucket as Prometheus's histogram_quantile does; past the last
// finite bound it returns that bound.
func (h histogram) quantile(q float64) float64 {
	bounds := slices.Sorted(maps.Keys(h))
	total := h[math.Inf(1)]
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		if h[le] >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			return lower + (le-lower)*(rank-below)/(h[le]-below)
		}
		lower, below = le, h[le]
	}
	return lower
}

// postUntilDone writes a body, sent again after a 429 or 503.
func (s *limitsServer) postUntilDone(ctx context.Context, tenant, table string, body []byte) error {
	for range 100 {
		status, _, err := s.post(ctx, tenant, table, bytes.NewReader(body))
		switch {
		case err != nil:
			return err
		case status == http.StatusOK:
			return nil
		case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
			time.Sleep(time.Second)
		default:
			return fmt.Errorf("write to %s: status %d", table, status)
		}
	}
	return fmt.Errorf("write to %s: refused 100 times", table)
}

// The shape of limitsSlowUploads' load.
const (
	slowUploads  = 5
	slowDeclared = 16 << 20
	slowSent     = 13 << 20
	smallWrites  = 53
)

// limitsSlowUploads opens five uploads of one tenant on a fresh server
// with the default limits, each declaring 16 MiB and sending 13 MiB, then
// a byte a second, and meanwhile sends another tenant's small writes, one
// event each: it returns how many succeeded, of how many.
func limitsSlowUploads(ctx context.Context, dir string, o Options) (ok, sent int, err error) {
	s, err := startLimitsServer(ctx, o.Timetable, dir, "", []string{benchTenant, otherTenant})
	if err != nil {
		return 0, 0, err
	}
	defer s.stop()
	addr := strings.TrimPrefix(s.base, "http://")
	uctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	filler := bytes.Repeat([]byte(" "), 64<<10)
	started := make(chan struct{}, slowUploads)
	for range slowUploads {
		wg.Go(func() {
			var d net.Dialer
			c, err := d.DialContext(uctx, "tcp", addr)
			if err != nil {
				started <- struct{}{}
				return
			}
			defer c.Close()
			// A write the server no longer reads ends: the upload is
			// as slow as it may be.
			c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			go func() {
				<-uctx.Done()
				c.Close()
			}()
			fmt.Fprintf(c, "POST /v1/tables/slow/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n", addr, s.keys[benchTenant], slowDeclared)
			for n := 0; n < slowSent; n += len(filler) {
				if _, err := c.Write(filler); err != nil {
					break
				}
			}
			started <- struct{}{}
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-uctx.Done():
					return
				case <-t.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		})
	}
	for range slowUploads {
		<-started
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range smallWrites {
		body := fmt.Sprintf(`{"time":%d,"series":"g","fields":{"v":%d}}`+"\n", base.Add(time.Duration(i)*time.Second).UnixMilli(), i)
		status, _, err := s.post(ctx, otherTenant, "small", strings.NewReader(body))
		if err == nil && status == http.StatusOK {
			ok++
		}
	}
	o.Progress(fmt.Sprintf("another tenant's small writes during one tenant's %d slow uploads: %d of %d succeeded", slowUploads, ok, smallWrites))
	return ok, smallWrites, nil
}
