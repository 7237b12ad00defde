package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/timetabledb/timetable/event"
)

// The peer comparison puts timetable's server on Pebble beside the
// databases its users would pick instead, each a plain process on
// loopback in a temp dir, one at a time: the same readings written the
// same way (peerClients at once, peerBatch a request), the same queries
// asked over each one's own protocol (and InfluxQL of those that speak
// it), every answer checked against the workload, and each one's cost
// measured from outside the
// same way (CPU and memory of its processes, bytes of its data dir).
const (
	peerClients = 4
	peerBatch   = 5000
)

// A peer is one system of the comparison, timetable's server included.
type peer interface {
	// name and version are what the table calls it.
	name() string
	version() string
	// durability says what an acknowledged write has survived.
	durability() string
	// start starts the server in dir, an empty directory, on a free
	// loopback port, ready for writes, installing it first if need be
	// and saying so to progress. Its data live in dataDir.
	start(ctx context.Context, dir string, progress func(string)) (*daemon, error)
	dataDir() string
	// write returns the write of readings, encoded ahead so that a
	// timing is of the server's work. It may be called from several
	// goroutines at once.
	write(readings []reading) func(context.Context) error
	// aggregate counts and sums aggregateField by the hour over [from,
	// to), of one series or, when series is "", of all of them; hours
	// without readings are left out.
	aggregate(ctx context.Context, series string, from, to time.Time) ([]bucket, error)
	// latest returns the times of the newest n readings of a series in
	// [from, to), newest first.
	latest(ctx context.Context, series string, from, to time.Time, n int) ([]time.Time, error)
	// between returns the times of a series' readings in [from, to), in
	// order.
	between(ctx context.Context, series string, from, to time.Time) ([]time.Time, error)
	// flush writes everything acknowledged to the data files, as a
	// stopped or checkpointed server leaves them; the server may be
	// stopped afterwards.
	flush(ctx context.Context) error
	// close releases the peer's clients; the runner stops the daemon.
	close()
}

// httpPeer is what a peer spoken to over HTTP keeps: its directory, its
// base URL, the version it said it is, and its client.
type httpPeer struct {
	dir    string
	base   string
	vers   string
	client *http.Client
}

func (p *httpPeer) version() string { return p.vers }
func (p *httpPeer) close()          { p.client.CloseIdleConnections() }

// A profiledPeer is a peer whose server profiles its own CPU.
type profiledPeer interface {
	// profileCPU profiles the server from now until stop is called; stop
	// returns the profiles, in pprof's format, each of a window of the
	// time between.
	profileCPU(ctx context.Context) (stop func() ([][]byte, error))
}

// A peerQuery is one of the queries, asked again and again.
type peerQuery struct {
	name string
	// reps is how many timed runs the percentiles are of.
	reps int
	// run asks the rep-th query of its kind, checks the answer, and
	// returns how long the answer took.
	run func(ctx context.Context, p peer, w peerWorkload, rep int) (time.Duration, error)
}

// querySeries is the series of the rep-th query: scattered over all.
func querySeries(rep int) int { return rep * 7919 % workloadSeries }

var peerQueries = []peerQuery{
	{name: "aggregate by hour, all series, one day", reps: 50, run: func(ctx context.Context, p peer, w peerWorkload, rep int) (time.Duration, error) {
		from := w.start.Add(time.Duration(rep%workloadDays) * 24 * time.Hour)
		to := from.Add(24 * time.Hour)
		begin := time.Now()
		got, err := p.aggregate(ctx, "", from, to)
		took := time.Since(begin)
		if err != nil {
			return 0, err
		}
		return took, checkBuckets("aggregate of all series on "+from.Format(time.DateOnly), got, w.hourly(-1, from, to))
	}},
	{name: "aggregate by hour, one series, 7 days", reps: 200, run: func(ctx context.Context, p peer, w peerWorkload, rep int) (time.Duration, error) {
		s := querySeries(rep)
		begin := time.Now()
		got, err := p.aggregate(ctx, seriesName(s), w.start, w.end())
		took := time.Since(begin)
		if err != nil {
			return 0, err
		}
		return took, checkBuckets("aggregate of "+seriesName(s), got, w.hourly(s, w.start, w.end()))
	}},
	influxQLHourly,
	{name: "latest 10 of one series", reps: 1000, run: func(ctx context.Context, p peer, w peerWorkload, rep int) (time.Duration, error) {
		s := querySeries(rep)
		begin := time.Now()
		got, err := p.latest(ctx, seriesName(s), w.start, w.end(), 10)
		took := time.Since(begin)
		if err != nil {
			return 0, err
		}
		want := w.times(w.ofSeries(s, w.start, w.end()))
		want = want[len(want)-10:]
		slices.Reverse(want)
		return took, checkTimes("latest 10 of "+seriesName(s), got, want)
	}},
	{name: "one hour of one series", reps: 1000, run: func(ctx context.Context, p peer, w peerWorkload, rep int) (time.Duration, error) {
		s := querySeries(rep)
		from := w.start.Add(time.Duration(rep*31%(workloadDays*24)) * time.Hour)
		to := from.Add(time.Hour)
		begin := time.Now()
		got, err := p.between(ctx, seriesName(s), from, to)
		took := time.Since(begin)
		if err != nil {
			return 0, err
		}
		return took, checkTimes(fmt.Sprintf("%s from %s", seriesName(s), from.Format(time.RFC3339)), got, w.times(w.ofSeries(s, from, to)))
	}},
	emptyRequest,
}

// A peerResult is one system's column of the table.
type peerResult struct {
	name, version, durability string
	ingest                    float64 // events/s
	cpuPerEvent               float64 // µs of server CPU per event written
	p50, p99                  []float64
	disk                      float64 // MiB
	memory                    float64 // MiB
}

// PeerReport is the peer comparison's table.
type PeerReport struct {
	results []peerResult
	notes   []string
}

// peerSystems lists the systems of the comparison, timetable first:
// of the chunk layout as written and packed, then of the row layout,
// then its peers; only
// those o.PeerSystems names (by name, in any case), when it names any.
func peerSystems(o Options) ([]peer, error) {
	all := []peer{
		&timetablePeer{bin: o.Timetable, layout: "chunk"},
		&timetablePeer{bin: o.Timetable, layout: "chunk", packed: true},
		&timetablePeer{bin: o.Timetable, layout: "row"},
		&influxPeer{},
		&postgresPeer{},
		&victoriaPeer{},
		&clickhousePeer{},
	}
	if len(o.PeerSystems) == 0 {
		return all, nil
	}
	var names []string
	var out []peer
	for _, p := range all {
		names = append(names, p.name())
		if slices.ContainsFunc(o.PeerSystems, func(n string) bool { return strings.EqualFold(n, p.name()) }) {
			out = append(out, p)
		}
	}
	if len(out) != len(o.PeerSystems) {
		return nil, fmt.Errorf("peer systems %q: each must be one of %s", o.PeerSystems, strings.Join(names, ", "))
	}
	return out, nil
}

// Peers measures timetable beside its peers, one after the other.
func Peers(ctx context.Context, o Options) (*PeerReport, error) {
	w := newPeerWorkload(time.Now())
	batches := w.batches(peerBatch)
	r := &PeerReport{}
	peers, err := peerSystems(o)
	if err != nil {
		return nil, err
	}
	for _, p := range peers {
		dir := filepath.Join(o.Dir, "peer-"+strings.ToLower(p.name()))
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		res, err := measurePeer(ctx, p, dir, w, batches, o.PeerProfile, o.Progress)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name(), err)
		}
		r.results = append(r.results, res)
	}
	var text, item int
	for _, rd := range batches[0] {
		text += len(ndjson([]event.Event{rd.event()}))
		item += itemSize(rd.event())
	}
	r.notes = append(r.notes,
		fmt.Sprintf("%d events of %d numbers over %d series and %d days, %d bytes each as DynamoDB sizes an item, %d as NDJSON; %d clients writing %d events a request",
			workloadEvents, len(workloadFields), workloadSeries, workloadDays, item/len(batches[0]), text/len(batches[0]), peerClients, peerBatch),
		"each query's p50/p99 over its runs after one untimed run; every answer checked against the generator",
		"ratio is timetable's figure over the peer's: above 1 is better for ev/s, below 1 for the rest",
		"disk: the data dir after a flush (timetable: `timetable compact`), less what it held empty, blocks preallocated past a file's end not counted (PostgreSQL's includes pg_wal, whose segments it keeps for reuse)",
		"peak memory: VmHWM of the server; for PostgreSQL, whose processes share buffers, the highest sum of their PSS, sampled every 100 ms",
		pingNote(peers),
	)
	return r, nil
}

// measurePeer starts p in dir, writes the batches, asks each query its
// runs, flushes, and stops p on every way out: one column of the table.
// When profileDir is set and p profiles itself, the CPU profiles of its
// ingest go there, and those of each query, asked again after its timed
// runs (profileQuery), as NAME-queryN, N its place in peerQueries.
func measurePeer(ctx context.Context, p peer, dir string, w peerWorkload, batches [][]reading, profileDir string, progress func(string)) (res peerResult, err error) {
	progress("peers: starting " + p.name())
	d, err := p.start(ctx, dir, progress)
	if d != nil {
		defer func() {
			if err != nil && d.exitedWithin(time.Second) {
				// A peer that died took the cause with it: its log says.
				err = fmt.Errorf("%w; %s exited (%v): %s", err, p.name(), d.err, d.logTail())
			}
			err = errors.Join(err, d.Stop())
		}()
	}
	if err != nil {
		return res, err
	}
	defer p.close()
	res = peerResult{name: p.name(), version: p.version(), durability: p.durability()}

	empty, err := diskUsage(p.dataDir())
	if err != nil {
		return res, err
	}
	writes := make([][]int, len(batches))
	encoded := make([]func(context.Context) error, len(batches))
	for i, b := range batches {
		encoded[i] = p.write(b)
		writes[i] = []int{i}
	}
	var stopProfile func() ([][]byte, error)
	if pp, ok := p.(profiledPeer); ok && profileDir != "" {
		stopProfile = sync.OnceValues(pp.profileCPU(ctx))
		defer stopProfile() // on an early way out; once saved, it returns at once
	}
	cpu0, err := d.CPU()
	if err != nil {
		return res, err
	}
	took, err := parallel(peerClients, writes, func(b []int) error { return encoded[b[0]](ctx) })
	if err != nil {
		return res, fmt.Errorf("ingest: %w", err)
	}
	cpu1, err := d.CPU()
	if err != nil {
		return res, err
	}
	if stopProfile != nil {
		if err := saveProfiles(profileDir, strings.ToLower(p.name())+"-ingest", stopProfile, progress); err != nil {
			return res, err
		}
	}
	res.ingest = rate(workloadEvents, took)
	res.cpuPerEvent = float64(cpu1-cpu0) / float64(time.Microsecond) / workloadEvents
	progress(fmt.Sprintf("peers: %s ingest %.0f ev/s, %.1f µs CPU per event", p.name(), res.ingest, res.cpuPerEvent))
	if err := waitVisible(ctx, p, w); err != nil {
		return res, err
	}
	if tp, ok := p.(*timetablePeer); ok {
		// A packed column's queries are of the store `timetable compact`
		// packed, served anew: its peak memory is the new server's.
		nd, err := tp.pack(ctx)
		if err != nil {
			return res, fmt.Errorf("pack: %w", err)
		}
		if nd != nil {
			d = nd
		}
	}

	for qi, q := range peerQueries {
		if _, err := q.run(ctx, p, w, q.reps); errors.Is(err, errNotAsked) {
			res.p50, res.p99 = append(res.p50, math.NaN()), append(res.p99, math.NaN())
			continue
		} else if err != nil {
			return res, err
		}
		ds := make([]time.Duration, q.reps)
		for rep := range q.reps {
			if ds[rep], err = q.run(ctx, p, w, rep); err != nil {
				return res, err
			}
		}
		slices.Sort(ds)
		res.p50 = append(res.p50, percentile(ds, 50))
		res.p99 = append(res.p99, percentile(ds, 99))
		progress(fmt.Sprintf("peers: %s %s p50 %.3f ms, p99 %.3f ms", p.name(), q.name, res.p50[len(res.p50)-1], res.p99[len(res.p99)-1]))
		if pp, ok := p.(profiledPeer); ok && profileDir != "" {
			name := fmt.Sprintf("%s-query%d", strings.ToLower(p.name()), qi+1)
			if err := profileQuery(ctx, pp, p, q, w, filepath.Join(profileDir, name), progress); err != nil {
				return res, err
			}
		}
	}
	mem, err := d.PeakMemory()
	if err != nil {
		return res, err
	}
	res.memory = float64(mem) / (1 << 20)
	if err := p.flush(ctx); err != nil {
		return res, fmt.Errorf("flush: %w", err)
	}
	disk, err := diskUsage(p.dataDir())
	if err != nil {
		return res, err
	}
	res.disk = float64(disk-empty) / (1 << 20)
	progress(fmt.Sprintf("peers: %s disk %.0f MiB, peak memory %.0f MiB", p.name(), res.disk, res.memory))
	return res, nil
}

// queryProfileFor is how long profileQuery asks a query over and over:
// long enough for a few hundred samples at pprof's 100 Hz.
const queryProfileFor = 5 * time.Second

// profileQuery asks q again and again for queryProfileFor, untimed and
// after its timed runs so that the profiler does not weigh on them, with
// p's server profiling its CPU, and saves the profiles as name-N.pb.gz.
func profileQuery(ctx context.Context, pp profiledPeer, p peer, q peerQuery, w peerWorkload, name string, progress func(string)) error {
	stop := sync.OnceValues(pp.profileCPU(ctx))
	defer stop() // on an early way out; once saved, it returns at once
	for rep, end := 0, time.Now().Add(queryProfileFor); time.Now().Before(end); rep++ {
		if _, err := q.run(ctx, p, w, rep%q.reps); err != nil {
			return err
		}
	}
	return saveProfiles(filepath.Dir(name), filepath.Base(name), stop, progress)
}

// saveProfiles stops a profile and writes its windows to dir as
// name-N.pb.gz.
func saveProfiles(dir, name string, stop func() ([][]byte, error), progress func(string)) error {
	profiles, err := stop()
	if err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	for i, prof := range profiles {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.pb.gz", name, i)), prof, 0o666); err != nil {
			return err
		}
	}
	progress(fmt.Sprintf("peers: %d CPU profiles in %s: go tool pprof -top BINARY %s", len(profiles), dir, filepath.Join(dir, name+"-*.pb.gz")))
	return nil
}

// visibleWithin bounds how long after its acknowledgement a write may
// take to be read.
const visibleWithin = 30 * time.Second

// waitVisible waits until queries see every reading written: a system
// may acknowledge writes before it can read them (VictoriaMetrics makes
// them searchable about a second later).
func waitVisible(ctx context.Context, p peer, w peerWorkload) error {
	deadline := time.Now().Add(visibleWithin)
	for {
		buckets, err := p.aggregate(ctx, "", w.start, w.end())
		if err != nil {
			return err
		}
		n := 0
		for _, b := range buckets {
			n += b.Count
		}
		if n == workloadEvents {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d readings of %d visible %s after the last write", n, workloadEvents, visibleWithin)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Print writes the table: a column per system, each peer's figure with
// timetable's ratio to it.
func (r *PeerReport) Print(w io.Writer) {
	fmt.Fprintln(w, "timetable serve on Pebble beside its peers, each figure with the ratio timetable/peer:")
	printTable(w, r.table())
	for _, n := range r.notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// table returns the comparison's cells, the header first.
func (r *PeerReport) table() [][]string {
	head := []string{"figure"}
	for _, res := range r.results {
		head = append(head, strings.TrimSpace(res.name+" "+res.version))
	}
	t := [][]string{head}
	row := func(figure string, value func(peerResult) float64, format string) {
		cells := []string{figure}
		tt := value(r.results[0])
		for i, res := range r.results {
			v := value(res)
			cell := fmt.Sprintf(format, v)
			if math.IsNaN(v) {
				cell = "—" // a query not asked of this peer
			} else if i > 0 && v != 0 && !math.IsNaN(tt) {
				cell += fmt.Sprintf(" (%.2f)", tt/v)
			}
			cells = append(cells, cell)
		}
		t = append(t, cells)
	}
	row("ingest, events/s", func(r peerResult) float64 { return r.ingest }, "%.0f")
	row("server CPU per event, µs", func(r peerResult) float64 { return r.cpuPerEvent }, "%.1f")
	for i, q := range peerQueries {
		row(q.name+", p50 ms", func(r peerResult) float64 { return r.p50[i] }, "%.3f")
		row(q.name+", p99 ms", func(r peerResult) float64 { return r.p99[i] }, "%.3f")
	}
	row("disk after a flush, MiB", func(r peerResult) float64 { return r.disk }, "%.1f")
	row("peak memory, MiB", func(r peerResult) float64 { return r.memory }, "%.0f")
	cells := []string{"durability at acknowledgement"}
	for _, res := range r.results {
		cells = append(cells, res.durability)
	}
	return append(t, cells)
}
