package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// victoriaPeer is VictoriaMetrics single-node (Debian's
// victoria-metrics) with its defaults but one: its cache of query
// results is off, so that a query asked again is computed again. It takes
// the readings as InfluxDB line protocol on /write and keeps each field
// as a metric of its own (sensors_temperature{series="sensor-0042"});
// aggregates are MetricsQL over /api/v1/query_range, and events are
// /api/v1/export's samples, since it has no query for the latest n.
type victoriaPeer struct{ httpPeer }

func (*victoriaPeer) name() string { return "VictoriaMetrics" }
func (*victoriaPeer) durability() string {
	return "buffered in memory, on disk about a second later"
}
func (p *victoriaPeer) dataDir() string   { return p.dir + "/data" }
func (*victoriaPeer) pingRequest() string { return "GET /health" }
func (p *victoriaPeer) ping(ctx context.Context) error {
	return fetch(ctx, p.client, http.MethodGet, p.base+"/health", nil, nil, nil)
}

func (p *victoriaPeer) start(ctx context.Context, dir string, progress func(string)) (*daemon, error) {
	bin, err := installed(ctx, "victoria-metrics", onPath("victoria-metrics"), progress)
	if err != nil {
		return nil, err
	}
	p.vers = debianVersion(ctx, "victoria-metrics")
	p.dir = dir
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d, err := startDaemon("victoria-metrics", dir, syscall.SIGTERM, nil, nil, bin,
		"-storageDataPath="+p.dataDir(), fmt.Sprintf("-httpListenAddr=127.0.0.1:%d", port),
		"-search.disableCache", "-loggerLevel=ERROR")
	if err != nil {
		return nil, err
	}
	p.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	p.client = peerHTTP()
	return d, d.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		return fetch(ctx, p.client, http.MethodGet, p.base+"/health", nil, nil, nil)
	})
}

func (p *victoriaPeer) write(readings []reading) func(context.Context) error {
	var body bytes.Buffer
	for _, r := range readings {
		appendReadingLine(&body, r)
	}
	return func(ctx context.Context) error {
		return fetch(ctx, p.client, http.MethodPost, p.base+"/write?precision=ms", nil, body.Bytes(), nil)
	}
}

// unixSeconds is a time as VictoriaMetrics' parameters take it.
func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// aggregate asks for the count and the sum in one query: each point of a
// range query is over the hour (t-1h, t], so the points are at the ends
// of the hours.
func (p *victoriaPeer) aggregate(ctx context.Context, series string, from, to time.Time) ([]bucket, error) {
	selector := "sensors_" + aggregateField
	if series != "" {
		selector += fmt.Sprintf("{series=%q}", series)
	}
	q := fmt.Sprintf(`union(label_set(sum(count_over_time(%[1]s[1h])), "fn", "count"), label_set(sum(sum_over_time(%[1]s[1h])), "fn", "sum"))`, selector)
	params := url.Values{"query": {q}, "start": {unixSeconds(from.Add(time.Hour))}, "end": {unixSeconds(to)}, "step": {"1h"}}
	var answer struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Values [][2]any
			}
		}
	}
	if err := fetch(ctx, p.client, http.MethodPost, p.base+"/api/v1/query_range?"+params.Encode(), nil, nil, &answer); err != nil {
		return nil, err
	}
	byEnd := map[int64]*bucket{}
	for _, r := range answer.Data.Result {
		for _, v := range r.Values {
			end, err1 := asNumber(v[0])
			x, err2 := asNumber(v[1])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("query_range: point %v", v)
			}
			ms := int64(end * 1000)
			b := byEnd[ms]
			if b == nil {
				b = &bucket{Start: time.UnixMilli(ms).Add(-time.Hour).UTC()}
				byEnd[ms] = b
			}
			switch r.Metric["fn"] {
			case "count":
				b.Count = int(x)
			case "sum":
				b.Sum = x
			default:
				return nil, fmt.Errorf("query_range: series %v", r.Metric)
			}
		}
	}
	out := make([]bucket, 0, len(byEnd))
	for _, b := range byEnd {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b bucket) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// export returns the times of a series' samples in [from, to), of every
// field: one line of samples per field, which must agree.
func (p *victoriaPeer) export(ctx context.Context, series string, from, to time.Time) ([]time.Time, error) {
	params := url.Values{"match[]": {fmt.Sprintf("{series=%q}", series)}, "start": {unixSeconds(from)}, "end": {unixSeconds(to.Add(-time.Millisecond))}}
	answer, err := send(ctx, p.client, http.MethodPost, p.base+"/api/v1/export?"+params.Encode(), nil, nil)
	if err != nil {
		return nil, err
	}
	defer answer.Close()
	var times []int64
	fields := 0
	lines := bufio.NewScanner(answer)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var line struct{ Timestamps []int64 }
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if fields > 0 && !slices.Equal(line.Timestamps, times) {
			return nil, fmt.Errorf("export of %s: the fields' samples differ", series)
		}
		times = line.Timestamps
		fields++
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	if fields != 0 && fields != len(workloadFields) {
		return nil, fmt.Errorf("export of %s: %d fields, want %d", series, fields, len(workloadFields))
	}
	out := make([]time.Time, len(times))
	for i, ms := range times {
		out[i] = time.UnixMilli(ms).UTC()
	}
	return out, nil
}

// latest exports the whole range and keeps the newest n.
func (p *victoriaPeer) latest(ctx context.Context, series string, from, to time.Time, n int) ([]time.Time, error) {
	ts, err := p.export(ctx, series, from, to)
	if err != nil {
		return nil, err
	}
	ts = ts[max(0, len(ts)-n):]
	slices.Reverse(ts)
	return ts, nil
}

func (p *victoriaPeer) between(ctx context.Context, series string, from, to time.Time) ([]time.Time, error) {
	return p.export(ctx, series, from, to)
}

// flush writes the samples buffered in memory to the data dir.
func (p *victoriaPeer) flush(ctx context.Context) error {
	return fetch(ctx, p.client, http.MethodGet, p.base+"/internal/force_flush", nil, nil, nil)
}
