package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresPeer is PostgreSQL (Debian's postgresql) with initdb's
// defaults: fsync and synchronous_commit on, 128 MB of shared buffers.
// The readings are a table of a column per field, indexed on (series,
// time), written with COPY (one transaction per batch) and read in SQL
// through pgx, whose statements are prepared and cached.
type postgresPeer struct {
	dir  string
	vers string
	pool *pgxpool.Pool
}

func (*postgresPeer) name() string       { return "PostgreSQL" }
func (p *postgresPeer) version() string  { return p.vers }
func (*postgresPeer) durability() string { return "WAL fsynced at commit (synchronous_commit on)" }
func (p *postgresPeer) dataDir() string  { return filepath.Join(p.dir, "data") }

func (p *postgresPeer) close() {
	if p.pool != nil {
		p.pool.Close()
	}
}

const postgresSchema = `CREATE TABLE sensors (
	series text NOT NULL,
	time timestamptz NOT NULL,
	temperature double precision,
	humidity double precision,
	pressure double precision,
	voltage double precision
);
CREATE INDEX ON sensors (series, time);`

// postgresUser is who initdb and postgres run as when the benchmark runs
// as root, which PostgreSQL refuses to be.
func postgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (p *postgresPeer) start(ctx context.Context, dir string, progress func(string)) (*daemon, error) {
	bin, err := installed(ctx, "postgresql", postgresBin, progress)
	if err != nil {
		return nil, err
	}
	p.vers = debianVersion(ctx, "postgresql-"+filepath.Base(filepath.Dir(bin)))
	p.dir = dir
	as, err := postgresUser()
	if err != nil {
		return nil, err
	}
	if as != nil {
		// The postgres user must reach its directory through the
		// benchmark's, which only root may enter.
		if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, int(as.Uid), int(as.Gid)); err != nil {
			return nil, err
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", p.dataDir(), "-U", "postgres", "--auth=trust", "--no-sync", "--no-locale", "-E", "UTF8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: as}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// SIGINT is PostgreSQL's fast shutdown: SIGTERM would wait for
	// clients to leave.
	d, err := startDaemon("postgres", dir, syscall.SIGINT, as, nil, filepath.Join(bin, "postgres"), "-D", p.dataDir(),
		"-p", strconv.Itoa(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "timezone=UTC")
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		return d, err
	}
	cfg.MaxConns = peerClients
	if err := d.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}); err != nil {
		return d, err
	}
	if p.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return d, err
	}
	if _, err := p.pool.Exec(ctx, postgresSchema); err != nil {
		return d, fmt.Errorf("schema: %w", err)
	}
	return d, nil
}

func (p *postgresPeer) write(readings []reading) func(context.Context) error {
	rows := make([][]any, len(readings))
	for i, r := range readings {
		rows[i] = []any{r.Series, r.Time, r.Values[0], r.Values[1], r.Values[2], r.Values[3]}
	}
	columns := append([]string{"series", "time"}, workloadFields...)
	return func(ctx context.Context) error {
		_, err := p.pool.CopyFrom(ctx, pgx.Identifier{workloadTable}, columns, pgx.CopyFromRows(rows))
		return err
	}
}

func (p *postgresPeer) aggregate(ctx context.Context, series string, from, to time.Time) ([]bucket, error) {
	q := `SELECT date_trunc('hour', time), count(temperature), sum(temperature) FROM sensors
		WHERE time >= $1 AND time < $2 GROUP BY 1 ORDER BY 1`
	args := []any{from, to}
	if series != "" {
		q = `SELECT date_trunc('hour', time), count(temperature), sum(temperature) FROM sensors
			WHERE series = $3 AND time >= $1 AND time < $2 GROUP BY 1 ORDER BY 1`
		args = append(args, series)
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (bucket, error) {
		var b bucket
		err := row.Scan(&b.Start, &b.Count, &b.Sum)
		return b, err
	})
}

// events reads whole rows, as the other systems return whole events, and
// returns their times.
func (p *postgresPeer) events(ctx context.Context, q string, args ...any) ([]time.Time, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (time.Time, error) {
		var t time.Time
		var v [4]float64
		err := row.Scan(&t, &v[0], &v[1], &v[2], &v[3])
		return t, err
	})
}

// ping asks SELECT 1 as the queries are asked: a prepared statement on
// a connection of the pool.
func (p *postgresPeer) ping(ctx context.Context) error {
	var one int
	return p.pool.QueryRow(ctx, "SELECT 1").Scan(&one)
}

func (*postgresPeer) pingRequest() string {
	return "SELECT 1 over its binary protocol, as the point reads are asked"
}

func (p *postgresPeer) latest(ctx context.Context, series string, from, to time.Time, n int) ([]time.Time, error) {
	return p.events(ctx, `SELECT time, temperature, humidity, pressure, voltage FROM sensors
		WHERE series = $1 AND time >= $2 AND time < $3 ORDER BY time DESC LIMIT $4`, series, from, to, n)
}

func (p *postgresPeer) between(ctx context.Context, series string, from, to time.Time) ([]time.Time, error) {
	return p.events(ctx, `SELECT time, temperature, humidity, pressure, voltage FROM sensors
		WHERE series = $1 AND time >= $2 AND time < $3 ORDER BY time`, series, from, to)
}

// flush checkpoints: every page the WAL holds is written to the table's
// and the index's files.
func (p *postgresPeer) flush(ctx context.Context) error {
	_, err := p.pool.Exec(ctx, "CHECKPOINT")
	return err
}
