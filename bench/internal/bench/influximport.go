package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// importFields is the number of fields of each point of the influximport
// part: influx_inspect export writes each on a line of its own.
const importFields = 3

// InfluxImport measures `timetable import --any-age` of a file as
// `influx_inspect export` writes it (the DDL and DML sections, one field
// a line, a series' fields one after another, nanosecond times a year and
// more old) into a new embedded store, beside InfluxDB's own `influx
// -import` of the same file into influxd: the points a
// second of each, the import's joining of a point's lines into one event
// included.
func InfluxImport(ctx context.Context, o Options, r *Report) error {
	if o.Timetable == "" {
		return fmt.Errorf("influximport: no timetable binary: give -timetable (make bench builds bin/timetable)")
	}
	influx, err := installed(ctx, "influxdb-client", onPath("influx"), o.Progress)
	if err != nil {
		return err
	}
	dir := filepath.Join(o.Dir, "influximport")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const series = 100
	points := max(o.Events/2, 10000) / series * series
	path := filepath.Join(dir, "export.lp")
	if err := writeInspectExport(path, series, points/series); err != nil {
		return err
	}

	// timetable import into a new embedded store.
	store := "pebble:" + filepath.Join(dir, "timetable")
	env := os.Environ()
	if _, err := runTimetable(ctx, env, o.Timetable, "--store", store, "tenant", "add", "acme"); err != nil {
		return err
	}
	began := time.Now()
	if _, err := runTimetable(ctx, env, o.Timetable, "--store", store, "import", "--tenant", "acme", "--any-age", path); err != nil {
		return err
	}
	ours := float64(points) / time.Since(began).Seconds()
	o.Progress(fmt.Sprintf("timetable import of %d points: %.0f points/s", points, ours))

	// influx -import into an influxd of its own.
	peer := &influxPeer{}
	peerDir := filepath.Join(dir, "influxd")
	if err := os.MkdirAll(peerDir, 0o755); err != nil {
		return err
	}
	d, err := peer.start(ctx, peerDir, o.Progress)
	if d != nil {
		defer d.Stop()
	}
	if err != nil {
		return fmt.Errorf("influxd: %w", err)
	}
	u, err := url.Parse(peer.base)
	if err != nil {
		return err
	}
	began = time.Now()
	out, err := exec.CommandContext(ctx, influx, "-host", u.Hostname(), "-port", u.Port(), "-import", "-path", path, "-precision", "ns").CombinedOutput()
	if err != nil {
		return fmt.Errorf("influx -import: %w: %s", err, out)
	}
	theirs := float64(points) / time.Since(began).Seconds()
	if !strings.Contains(string(out), "Failed 0 inserts") {
		return fmt.Errorf("influx -import failed some lines: %s", out)
	}
	o.Progress(fmt.Sprintf("influx -import of %d points: %.0f points/s", points, theirs))
	r.Rows = append(r.Rows, Row{
		Figure: fmt.Sprintf("timetable import of an influx_inspect export, %d points of %d fields", points, importFields),
		Value:  ours, Unit: "points/s",
		Baseline: "influx -import into influxd, same file", Base: theirs,
	})
	return nil
}

// writeInspectExport writes per points of each of series series as
// influx_inspect export does: each field of a series with all its times
// before the next field, a point a second from two years ago.
func writeInspectExport(path string, series, per int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, "# INFLUXDB EXPORT\n# DDL\nCREATE DATABASE bench_import WITH NAME autogen\n# DML\n# CONTEXT-DATABASE:bench_import\n# CONTEXT-RETENTION-POLICY:autogen\n")
	first := time.Now().UTC().AddDate(-2, 0, 0).Truncate(time.Hour)
	for s := range series {
		for field := range importFields {
			for i := range per {
				at := first.Add(time.Duration(i) * time.Second).UnixNano()
				switch field {
				case 0:
					fmt.Fprintf(w, "weather,probe=%d,site=s%02d temp=%d.%d %d\n", s, s%10, 15+i%20, i%10, at)
				case 1:
					fmt.Fprintf(w, "weather,probe=%d,site=s%02d rain=%di %d\n", s, s%10, i%7, at)
				case 2:
					fmt.Fprintf(w, "weather,probe=%d,site=s%02d ok=%t %d\n", s, s%10, i%3 != 0, at)
				}
			}
		}
	}
	return errors.Join(w.Flush(), f.Close())
}
