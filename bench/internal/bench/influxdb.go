package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/timetabledb/timetable/internal/clients"
)

// influxPeer is InfluxDB 1.x (Debian's influxdb), with its defaults but
// for what a benchmark on loopback needs: line protocol on /write,
// InfluxQL on /query, the TSM engine with its in-memory index, the WAL
// fsynced on every write (wal-fsync-delay 0s, the default).
type influxPeer struct{ httpPeer }

const influxDB = "bench"

func (*influxPeer) name() string        { return "InfluxDB" }
func (*influxPeer) pingRequest() string { return "GET /ping (204)" }
func (p *influxPeer) ping(ctx context.Context) error {
	return fetch(ctx, p.client, http.MethodGet, p.base+"/ping", nil, nil, nil)
}
func (*influxPeer) durability() string   { return "WAL fsynced per request" }
func (p *influxPeer) dataDir() string    { return p.dir }
func (p *influxPeer) walDir() string     { return filepath.Join(p.dir, "wal") }
func (p *influxPeer) configPath() string { return filepath.Join(p.dir, "influxdb.conf") }

func (p *influxPeer) start(ctx context.Context, dir string, progress func(string)) (*daemon, error) {
	bin, err := installed(ctx, "influxdb", onPath("influxd"), progress)
	if err != nil {
		return nil, err
	}
	p.vers = debianVersion(ctx, "influxdb")
	p.dir = dir
	rpc, err := freePort()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.configPath(), fmt.Appendf(nil, clients.InfluxdConfig, rpc, dir, port), 0o666); err != nil {
		return nil, err
	}
	d, err := startDaemon("influxd", dir, syscall.SIGTERM, nil, nil, bin, "-config", p.configPath())
	if err != nil {
		return nil, err
	}
	p.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	p.client = peerHTTP()
	if err := d.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		return fetch(ctx, p.client, http.MethodGet, p.base+"/ping", nil, nil, nil)
	}); err != nil {
		return d, err
	}
	_, err = p.query(ctx, "CREATE DATABASE "+influxDB)
	return d, err
}

// appendReadingLine writes a reading as a line of InfluxDB's line protocol, which
// VictoriaMetrics takes too: measurement, series tag, fields, time in ms.
func appendReadingLine(b *bytes.Buffer, r reading) {
	fmt.Fprintf(b, "%s,series=%s ", workloadTable, r.Series)
	for j, f := range workloadFields {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%s=%s", f, number(r.Values[j]))
	}
	fmt.Fprintf(b, " %d\n", r.Time.UnixMilli())
}

func (p *influxPeer) write(readings []reading) func(context.Context) error {
	var body bytes.Buffer
	for _, r := range readings {
		appendReadingLine(&body, r)
	}
	return func(ctx context.Context) error {
		return fetch(ctx, p.client, http.MethodPost, p.base+"/write?db="+influxDB+"&precision=ms", nil, body.Bytes(), nil)
	}
}

// query runs InfluxQL and returns the rows of its one statement's one
// series (none when nothing matched), times in milliseconds.
func (p *influxPeer) query(ctx context.Context, q string) ([][]any, error) {
	return influxQuery(ctx, p.client, http.MethodPost, p.base, nil, q)
}

// influxQuery runs InfluxQL on the /query of the server at base and
// returns the rows of its one statement's one series (none when nothing
// matched), times in milliseconds.
func influxQuery(ctx context.Context, client *http.Client, method, base string, header http.Header, q string) ([][]any, error) {
	var answer struct {
		Results []struct {
			Error  string
			Series []struct{ Values [][]any }
		}
	}
	u := base + "/query?" + url.Values{"db": {influxDB}, "epoch": {"ms"}, "q": {q}}.Encode()
	if err := fetch(ctx, client, method, u, header, nil, &answer); err != nil {
		return nil, err
	}
	if len(answer.Results) != 1 {
		return nil, fmt.Errorf("%s: %d results", q, len(answer.Results))
	}
	if e := answer.Results[0].Error; e != "" {
		return nil, fmt.Errorf("%s: %s", q, e)
	}
	switch len(answer.Results[0].Series) {
	case 0:
		return nil, nil
	case 1:
		return answer.Results[0].Series[0].Values, nil
	}
	return nil, fmt.Errorf("%s: %d series", q, len(answer.Results[0].Series))
}

// influxWhere selects a series, when one is given, and [from, to).
func influxWhere(series string, from, to time.Time) string {
	w := fmt.Sprintf("time >= '%s' AND time < '%s'", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	if series != "" {
		w = fmt.Sprintf(`"series" = '%s' AND %s`, series, w) // SERIES is a keyword
	}
	return w
}

func (p *influxPeer) aggregate(ctx context.Context, series string, from, to time.Time) ([]bucket, error) {
	rows, err := p.query(ctx, influxHourly(series, from, to))
	if err != nil {
		return nil, err
	}
	return influxBuckets(rows)
}

// influxHourly is the InfluxQL of aggregate.
func influxHourly(series string, from, to time.Time) string {
	return fmt.Sprintf("SELECT count(%[1]s), sum(%[1]s) FROM %s WHERE %s GROUP BY time(1h) fill(none)",
		aggregateField, workloadTable, influxWhere(series, from, to))
}

// influxBuckets reads the rows of influxHourly.
func influxBuckets(rows [][]any) ([]bucket, error) {
	out := make([]bucket, len(rows))
	for i, row := range rows {
		if len(row) != 3 {
			return nil, fmt.Errorf("aggregate: row %v", row)
		}
		ms, err1 := row[0].(json.Number).Int64()
		count, err2 := row[1].(json.Number).Int64()
		sum, err3 := asNumber(row[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("aggregate: row %v: %w", row, err)
		}
		out[i] = bucket{Start: time.UnixMilli(ms).UTC(), Count: int(count), Sum: sum}
	}
	return out, nil
}

func (p *influxPeer) events(ctx context.Context, q string) ([]time.Time, error) {
	rows, err := p.query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, len(rows))
	for i, row := range rows {
		ms, err := row[0].(json.Number).Int64()
		if err != nil {
			return nil, err
		}
		out[i] = time.UnixMilli(ms).UTC()
	}
	return out, nil
}

func (p *influxPeer) latest(ctx context.Context, series string, from, to time.Time, n int) ([]time.Time, error) {
	return p.events(ctx, fmt.Sprintf("SELECT * FROM %s WHERE %s ORDER BY time DESC LIMIT %d", workloadTable, influxWhere(series, from, to), n))
}

func (p *influxPeer) between(ctx context.Context, series string, from, to time.Time) ([]time.Time, error) {
	return p.events(ctx, fmt.Sprintf("SELECT * FROM %s WHERE %s", workloadTable, influxWhere(series, from, to)))
}

// flush waits for InfluxDB to snapshot its cache to TSM files, which
// empties its WAL, a second after the last write.
func (p *influxPeer) flush(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		wal, err := diskUsage(p.walDir())
		if err != nil {
			return err
		}
		tsm, _ := filepath.Glob(filepath.Join(p.dir, "data", influxDB, "*", "*", "*.tsm"))
		if wal <= 64<<10 && len(tsm) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("InfluxDB's WAL still holds %d bytes a minute after the last write", wal)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
