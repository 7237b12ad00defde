package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clickhousePeer is ClickHouse (Debian's clickhouse-server, 18.16), what
// users pick for aggregates over many series: a MergeTree table of a
// column per field ordered by (series, time), partitioned by month as its
// documentation advises, written with INSERT … FORMAT JSONEachRow over
// its HTTP interface (each request a new part on disk, merged in the
// background) and read in SQL over the same interface. Version 18.16 has
// no DateTime64, so times are Int64 milliseconds.
type clickhousePeer struct{ httpPeer }

func (*clickhousePeer) name() string        { return "ClickHouse" }
func (*clickhousePeer) pingRequest() string { return "GET /ping" }
func (p *clickhousePeer) ping(ctx context.Context) error {
	return fetch(ctx, p.client, http.MethodGet, p.base+"ping", nil, nil, nil)
}

// durability: a MergeTree insert writes its part's files and renames
// the part into place without fsync (18.16 has no fsync_after_insert),
// so an acknowledged insert is in the OS's page cache, not on disk.
func (*clickhousePeer) durability() string {
	return "part written to files, not fsynced (in the OS's page cache)"
}
func (p *clickhousePeer) dataDir() string    { return filepath.Join(p.dir, "data") }
func (p *clickhousePeer) configPath() string { return filepath.Join(p.dir, "config.xml") }
func (p *clickhousePeer) usersPath() string  { return filepath.Join(p.dir, "users.xml") }

// clickhouseConfig keeps ClickHouse on loopback and in its temp dir, its
// logs in files there and without the system log tables, so that its data
// dir holds the readings alone. One change from the defaults is for the
// flush: the parts a merge replaced are deleted a second after it
// (old_parts_lifetime, 480 s by default, which keeps them in case the
// merged part, not fsynced either, is lost to a crash) and the cleanup
// may run every second rather than every 30 to 40 (it runs when the
// background pool next wakes, up to about ten seconds later when it has
// nothing to merge); otherwise the disk after a flush would count every
// part twice. The mark cache, which it requires
// named, is its default size.
const clickhouseConfig = `<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>%[1]s/clickhouse-server.log</log>
        <errorlog>%[1]s/clickhouse-server.err.log</errorlog>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>%[2]d</http_port>
    <tcp_port>%[3]d</tcp_port>
    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/tmp/</tmp_path>
    <user_files_path>%[1]s/user_files/</user_files_path>
    <format_schema_path>%[1]s/format_schemas/</format_schema_path>
    <users_config>%[1]s/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>5368709120</mark_cache_size>
    <merge_tree>
        <old_parts_lifetime>1</old_parts_lifetime>
        <cleanup_delay_period>1</cleanup_delay_period>
        <cleanup_delay_period_random_add>0</cleanup_delay_period_random_add>
    </merge_tree>
</yandex>
`

// clickhouseUsers is the one user, default, with no password, reachable
// from loopback only.
const clickhouseUsers = `<?xml version="1.0"?>
<yandex>
    <profiles><default></default></profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default></default></quotas>
</yandex>
`

const clickhouseSchema = `CREATE TABLE sensors (
	series String,
	time Int64,
	temperature Float64,
	humidity Float64,
	pressure Float64,
	voltage Float64
) ENGINE = MergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(time, 1000)))
ORDER BY (series, time)`

func (p *clickhousePeer) start(ctx context.Context, dir string, progress func(string)) (*daemon, error) {
	bin, err := installed(ctx, "clickhouse-server", onPath("clickhouse-server"), progress)
	if err != nil {
		return nil, err
	}
	p.vers = debianVersion(ctx, "clickhouse-server")
	p.dir = dir
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	tcp, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.configPath(), fmt.Appendf(nil, clickhouseConfig, dir, port, tcp), 0o666); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.usersPath(), []byte(clickhouseUsers), 0o666); err != nil {
		return nil, err
	}
	d, err := startDaemon("clickhouse-server", dir, syscall.SIGTERM, nil, nil, bin, "--config-file="+p.configPath())
	if err != nil {
		return nil, err
	}
	p.base = fmt.Sprintf("http://127.0.0.1:%d/", port)
	p.client = peerHTTP()
	if err := d.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		return fetch(ctx, p.client, http.MethodGet, p.base+"ping", nil, nil, nil)
	}); err != nil {
		return d, err
	}
	return d, p.exec(ctx, clickhouseSchema)
}

// exec runs a statement that returns nothing.
func (p *clickhousePeer) exec(ctx context.Context, statement string) error {
	return fetch(ctx, p.client, http.MethodPost, p.base, nil, []byte(statement), nil)
}

// clickhouseRow is a reading as a line of JSONEachRow.
type clickhouseRow struct {
	Series      string  `json:"series"`
	Time        int64   `json:"time"`
	Temperature float64 `json:"temperature"`
	Humidity    float64 `json:"humidity"`
	Pressure    float64 `json:"pressure"`
	Voltage     float64 `json:"voltage"`
}

func (p *clickhousePeer) write(readings []reading) func(context.Context) error {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for _, r := range readings {
		// Encode to a buffer cannot fail on these types.
		_ = enc.Encode(clickhouseRow{r.Series, r.Time.UnixMilli(), r.Values[0], r.Values[1], r.Values[2], r.Values[3]})
	}
	u := p.base + "?" + url.Values{"query": {"INSERT INTO " + workloadTable + " FORMAT JSONEachRow"}}.Encode()
	return func(ctx context.Context) error {
		return fetch(ctx, p.client, http.MethodPost, u, nil, body.Bytes(), nil)
	}
}

// query runs a SELECT and returns its rows as TabSeparated fields.
func (p *clickhousePeer) query(ctx context.Context, q string) ([][]string, error) {
	answer, err := send(ctx, p.client, http.MethodPost, p.base, nil, []byte(q+" FORMAT TabSeparated"))
	if err != nil {
		return nil, err
	}
	defer answer.Close()
	var rows [][]string
	lines := bufio.NewScanner(answer)
	for lines.Scan() {
		rows = append(rows, strings.Split(lines.Text(), "\t"))
	}
	return rows, lines.Err()
}

// clickhouseString quotes s as a ClickHouse string literal: 18.16 has no
// query parameters.
func clickhouseString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// clickhouseWhere selects a series' rows, or every row when series is
// "", in [from, to).
func clickhouseWhere(series string, from, to time.Time) string {
	w := fmt.Sprintf("time >= %d AND time < %d", from.UnixMilli(), to.UnixMilli())
	if series != "" {
		w = "series = " + clickhouseString(series) + " AND " + w
	}
	return w
}

func (p *clickhousePeer) aggregate(ctx context.Context, series string, from, to time.Time) ([]bucket, error) {
	rows, err := p.query(ctx, fmt.Sprintf(`SELECT intDiv(time, 3600000) * 3600000 AS hour, count(%[1]s), sum(%[1]s)
		FROM %[2]s WHERE %[3]s GROUP BY hour ORDER BY hour`, aggregateField, workloadTable, clickhouseWhere(series, from, to)))
	if err != nil {
		return nil, err
	}
	out := make([]bucket, len(rows))
	for i, row := range rows {
		if len(row) != 3 {
			return nil, fmt.Errorf("aggregate: row %q", row)
		}
		hour, err1 := strconv.ParseInt(row[0], 10, 64)
		count, err2 := strconv.Atoi(row[1])
		sum, err3 := strconv.ParseFloat(row[2], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("aggregate: row %q", row)
		}
		out[i] = bucket{Start: time.UnixMilli(hour).UTC(), Count: count, Sum: sum}
	}
	return out, nil
}

// events reads whole rows, as the other systems return whole events, and
// returns their times.
func (p *clickhousePeer) events(ctx context.Context, series string, from, to time.Time, order string) ([]time.Time, error) {
	rows, err := p.query(ctx, fmt.Sprintf("SELECT time, %s FROM %s WHERE %s ORDER BY time %s",
		strings.Join(workloadFields, ", "), workloadTable, clickhouseWhere(series, from, to), order))
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, len(rows))
	for i, row := range rows {
		if len(row) != 1+len(workloadFields) {
			return nil, fmt.Errorf("events: row %q", row)
		}
		ms, err := strconv.ParseInt(row[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("events: row %q", row)
		}
		out[i] = time.UnixMilli(ms).UTC()
	}
	return out, nil
}

func (p *clickhousePeer) latest(ctx context.Context, series string, from, to time.Time, n int) ([]time.Time, error) {
	return p.events(ctx, series, from, to, fmt.Sprintf("DESC LIMIT %d", n))
}

func (p *clickhousePeer) between(ctx context.Context, series string, from, to time.Time) ([]time.Time, error) {
	return p.events(ctx, series, from, to, "")
}

// clickhouseCleanupWithin bounds how long the parts a merge replaced
// take to be deleted: a second after the merge, by clickhouseConfig, once
// the background pool wakes, which an idle pool does about every ten
// seconds.
const clickhouseCleanupWithin = 30 * time.Second

// flush merges each partition's parts into one and waits until the
// parts it replaced are deleted. OPTIMIZE … FINAL returns once its merge
// is done, but does nothing, without an error, when a background merge
// holds the parts; so flush asks again until each partition has one
// active part.
func (p *clickhousePeer) flush(ctx context.Context) error {
	deadline := time.Now().Add(clickhouseCleanupWithin)
	table := clickhouseString(workloadTable)
	for {
		unmerged, err := p.query(ctx, "SELECT count() FROM (SELECT partition FROM system.parts WHERE table = "+table+" AND active GROUP BY partition HAVING count() > 1)")
		if err != nil {
			return err
		}
		rows := unmerged
		if len(unmerged) != 1 || len(unmerged[0]) != 1 || unmerged[0][0] != "0" {
			if err := p.exec(ctx, "OPTIMIZE TABLE "+workloadTable+" FINAL"); err != nil {
				return err
			}
		} else {
			rows, err = p.query(ctx, "SELECT count() FROM system.parts WHERE table = "+table+" AND NOT active")
			if err != nil {
				return err
			}
			if len(rows) == 1 && len(rows[0]) == 1 && rows[0][0] == "0" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("partitions of more than one part, or parts replaced by the merge, still there after %s: %q", clickhouseCleanupWithin, rows)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
