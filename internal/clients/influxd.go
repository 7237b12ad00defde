package clients

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Influxd is an InfluxDB 1.x server (Debian's influxdb) on a free
// loopback port, its data, configuration and log in a directory of its
// own, without authentication.
type Influxd struct {
	// URL is its HTTP API, http://127.0.0.1:port.
	URL    string
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	err    error
}

// InfluxdConfig is the configuration file of an influxd, to be
// formatted with its RPC port, its directory and its HTTP port: it keeps
// InfluxDB on loopback and in its directory, quiet, and without the
// services that would work in the background (its own monitoring,
// retention, continuous queries). Every write is fsynced before it is
// acknowledged (wal-fsync-delay 0s), and a cache not written to for a
// second is snapshotted to TSM files, which is what the benchmark's
// flush waits for.
const InfluxdConfig = `reporting-disabled = true
bind-address = "127.0.0.1:%d"
[meta]
  dir = "%[2]s/meta"
  logging-enabled = false
[data]
  dir = "%[2]s/data"
  wal-dir = "%[2]s/wal"
  wal-fsync-delay = "0s"
  query-log-enabled = false
  cache-snapshot-write-cold-duration = "1s"
[retention]
  enabled = false
[shard-precreation]
  enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:%[3]d"
  log-enabled = false
[continuous_queries]
  enabled = false
[logging]
  level = "warn"
`

// StartInfluxd starts the influxd at path (Command finds it) with its
// files in dir, and waits until it answers /ping. Close stops it.
func StartInfluxd(path, dir string) (*Influxd, error) {
	rpc, err := freePort()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, InfluxdConfig, rpc, dir, port), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "influxd.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, "-config", conf)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start influxd: %w", err)
	}
	d := &Influxd{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	client := &http.Client{Timeout: time.Second}
	for range 300 {
		if r, err := client.Get(d.URL + "/ping"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusNoContent {
				return d, nil
			}
		}
		select {
		case <-d.exited:
			out, _ := os.ReadFile(log.Name())
			log.Close()
			return nil, fmt.Errorf("influxd exited (%v): %s", d.err, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	d.Close()
	return nil, errors.New("influxd did not answer /ping within 15s")
}

// Close stops the server.
func (d *Influxd) Close() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
	d.log.Close()
}
