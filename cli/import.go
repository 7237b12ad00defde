package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
	"github.com/timetabledb/timetable/ingest"
)

// importFlags are the flags of `timetable import`.
type importFlags struct {
	precision, database, refused string
	anyAge                       bool
	batch, windowMiB             int
}

func newImportCmd(g *globals) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import --tenant T [--any-age] FILE",
		Short: "Import line protocol, such as influx_inspect export's, into the store",
		Long: `import writes a file of InfluxDB line protocol into a tenant's tables: the
output of InfluxDB 1.x's ` + "`influx_inspect export`" + ` (its # DDL section is skipped, its
# DML section read), or any file of line protocol. Each measurement is a
logical table, its tag set the series, and its fields keep their types,
as the /write endpoint maps them (docs/api.md). influx_inspect writes each
field of a point on a line of its own: the lines of one measurement, tag
set and timestamp are joined into one event, as the point was in InfluxDB,
within a window of --window-mib of the file (the fields of a series lie
together in its export; a point whose lines lie further apart is stored
as more than one event, and the summary counts them).

History goes where it belongs: each event is filed under the write month
of its own time, as if it had been written when it happened, not in this
month's tables; with --any-age, events older than the backfill horizon are
taken too (only for this import: the horizon of servers is unchanged).
Events past their family's retention are still refused, since the
lifecycle would delete them.

A point that cannot be stored is refused alone: each is written to the
refused file (FILE.refused, or --refused) as a comment naming its lines
and the reason, followed by the point as a line, so that the file can be
corrected and imported in turn; the others are written. import exits with
status 1 when any point was refused.

import keeps its place in FILE.timetable-import after every window: run
after an interruption (Ctrl-C, a kill, a lost connection), it resumes
after the last window written. Writing a point twice stores nothing
twice, so importing a file again is safe. A progress bar shows on
standard error when it is a terminal, and a summary line ends the run.

import writes to the store itself, not through a server: stop a server
on the embedded store first (the store is one process's at a time); on
DynamoDB it runs beside the servers. An import of years of daily tables
makes many tables: the table budget's new tables per tenant and hour
(table_budget in the configuration) bounds it, and import waits for the
next hour when it is spent.`,
		Example: `  influx_inspect export -datadir ~/.influxdb/data -waldir ~/.influxdb/wal -database plant -out plant.lp
  timetable import --tenant acme --any-age plant.lp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, g, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.String("tenant", "", "tenant (default $"+EnvTenant+")")
	fl.BoolVar(&f.anyAge, "any-age", false, "take events older than the backfill horizon")
	fl.StringVar(&f.precision, "precision", "ns", "unit of the timestamps: ns (influx_inspect export's), us, ms, s, m or h")
	fl.StringVar(&f.database, "database", "", "import only the lines of this database of an influx_inspect export (its # CONTEXT-DATABASE)")
	fl.StringVar(&f.refused, "refused", "", "file of the refused lines (default FILE.refused)")
	fl.IntVar(&f.batch, "batch", 5000, "points per write")
	fl.IntVar(&f.windowMiB, "window-mib", 64, "MiB of lines joined into points at a time")
	return cmd
}

// runImport imports the file at path.
func runImport(cmd *cobra.Command, g *globals, f importFlags, path string) (err error) {
	if f.batch < 1 {
		return usageErrorf("--batch %d: use a positive number", f.batch)
	}
	if f.windowMiB < 1 {
		return usageErrorf("--window-mib %d: use a positive number", f.windowMiB)
	}
	if g.server != "" || os.Getenv(EnvServer) != "" {
		return usageErrorf("import writes to the store itself, not through --server: run it where the store is (stop a server on the embedded store first)")
	}
	precision, err := event.ParsePrecision(f.precision)
	if err != nil || precision == event.PrecisionAuto {
		return usageErrorf("--precision %q: use ns, us, ms, s, m or h", f.precision)
	}
	tenant, err := tenantName(cmd.Flags())
	if err != nil {
		return err
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	if f.refused == "" {
		f.refused = path + ".refused"
	}

	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	s, err := g.openSession(ctx, stderr, sessionOptions{logLevel: slog.LevelWarn, history: true, anyAge: f.anyAge})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if err := s.tenant(ctx, tenant); err != nil {
		return err
	}

	im := &importer{db: s.db, tenant: tenant, now: s.clock.Now, database: f.database, stderr: stderr,
		checkpointPath: path + ".timetable-import", refusedPath: f.refused, windowBytes: f.windowMiB << 20}
	im.limits = s.db.Options().Limits
	im.limits.Precision = precision
	im.place = importCheckpoint{Size: st.Size(), ModTime: st.ModTime().UTC()}
	if err := im.resume(file); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, im.closeRefused()) }()

	bar := newProgress(stderr, st.Size())
	if bar != nil {
		_ = bar.Set64(im.place.Offset)
	}
	start := time.Now()
	resumedWritten := im.place.Written
	err = im.run(ctx, bufio.NewReaderSize(file, 1<<20), f.batch, func(n int) {
		if bar != nil {
			_ = bar.Add(n)
		}
	})
	elapsed := time.Since(start)
	if bar != nil {
		_ = bar.Finish()
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(im.place.Written-resumedWritten) / elapsed.Seconds()
	}
	fmt.Fprintf(stderr, "imported %s into tenant %s, %s refused, in %s (%.0f events/s)\n",
		count(im.place.Written, "event"), tenant, count(im.place.Refused, "point"), elapsed.Round(time.Millisecond), rate)
	if im.place.Split > 0 {
		fmt.Fprintf(stderr, "%s had lines further apart than --window-mib %d, and were stored as more than one event\n", count(im.place.Split, "point"), f.windowMiB)
	}
	if err != nil {
		return fmt.Errorf("%w (run the same import again to resume after line %d)", err, im.place.Line)
	}
	// Done: a new run imports the file from its start.
	if err := os.Remove(im.checkpointPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if im.place.Refused > 0 {
		return fmt.Errorf("%s refused: see %s", count(im.place.Refused, "point"), f.refused)
	}
	return nil
}

// importCheckpoint is an import's place in its file, saved after every
// batch written: the file it is of (its size and modification time), and
// the offset and line number after the last batch, with the counts so
// far.
type importCheckpoint struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	Offset  int64     `json:"offset"`
	Line    int       `json:"line"`
	// Section is the part of an influx_inspect export the offset is in,
	// and Database its database.
	Section  string `json:"section,omitempty"`
	Database string `json:"database,omitempty"`
	// Written counts the events written, Refused the points refused,
	// and Split the points whose lines lay further apart than the
	// window, stored as more than one event.
	Written int `json:"written"`
	Refused int `json:"refused"`
	Split   int `json:"split,omitempty"`
}

// Sections of an influx_inspect export: statements, then line protocol.
const (
	sectionDDL = "ddl"
	sectionDML = "dml"
)

// importer writes a file of line protocol batch by batch.
type importer struct {
	db       *engine.DB
	tenant   string
	limits   event.Limits
	now      func() time.Time
	database string // --database, or "" for every database
	stderr   io.Writer

	windowBytes                 int
	checkpointPath, refusedPath string
	place                       importCheckpoint
	refused                     *os.File
}

// resume reads the checkpoint of an earlier run of the same file, if
// any, and moves file to its offset.
func (im *importer) resume(file *os.File) error {
	b, err := os.ReadFile(im.checkpointPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var saved importCheckpoint
	if err := json.Unmarshal(b, &saved); err != nil {
		return fmt.Errorf("read %s: %w (remove it to import from the start)", im.checkpointPath, err)
	}
	if saved.Size != im.place.Size || !saved.ModTime.Equal(im.place.ModTime) {
		fmt.Fprintf(im.stderr, "%s is of another version of the file: importing from the start\n", im.checkpointPath)
		return nil
	}
	if _, err := file.Seek(saved.Offset, io.SeekStart); err != nil {
		return err
	}
	im.place = saved
	fmt.Fprintf(im.stderr, "resuming after line %d (%s written, %s refused so far)\n", saved.Line, count(saved.Written, "event"), count(saved.Refused, "point"))
	return nil
}

// run reads in (positioned at im.place) to its end, a window of lines
// at a time: it joins each window's lines into points (pointWindow),
// writes them batch points at a time, and saves its place after each
// window. progress is told the bytes read.
func (im *importer) run(ctx context.Context, in *bufio.Reader, batch int, progress func(int)) error {
	var window pointWindow
	offset, lineNo := im.place.Offset, im.place.Line
	// flush writes the window and saves the place after it: the file's
	// line number and offset of its end.
	flush := func(line int, offset int64) error {
		body, lines := window.flush()
		for len(lines) > 0 {
			// batch points of body at a time.
			n := min(batch, len(lines))
			end := 0
			for range n {
				end += bytes.IndexByte(body[end:], '\n') + 1
			}
			if err := im.write(ctx, body[:end], lines[:n]); err != nil {
				return err
			}
			body, lines = body[end:], lines[n:]
		}
		im.place.Offset, im.place.Line, im.place.Split = offset, line, im.place.Split+window.split
		window.split = 0
		return im.save()
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the reader's buffer: gather it.
			whole := bytes.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = in.ReadSlice('\n')
				whole = append(whole, line...)
				if len(whole) > maxLine {
					return fmt.Errorf("line %d: longer than %d bytes", lineNo+1, maxLine)
				}
			}
			line = whole
		}
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return flush(lineNo, offset)
			}
			return fmt.Errorf("read line %d: %w", lineNo+1, err)
		}
		raw := line
		lineNo++
		offset += int64(len(raw))
		progress(len(raw))
		if im.take(line) {
			line = bytes.TrimRight(line, "\r\n")
			if window.full(line, im.windowBytes) {
				// The checkpoint's place is before this line.
				if err := flush(lineNo-1, offset-int64(len(raw))); err != nil {
					return err
				}
			}
			window.add(line, lineNo)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read line %d: %w", lineNo, err)
		}
	}
}

// take reads a line's place in an influx_inspect export (its # DDL and
// # DML headers, # CONTEXT-DATABASE) and reports whether it is line
// protocol to import: not a comment, not a statement of the DDL section,
// and of --database when it is set.
func (im *importer) take(line []byte) bool {
	text := strings.TrimSpace(string(line))
	switch {
	case text == "":
		return false
	case text == "# DDL":
		im.place.Section = sectionDDL
		return false
	case text == "# DML":
		im.place.Section = sectionDML
		return false
	case strings.HasPrefix(text, "# CONTEXT-DATABASE:"):
		im.place.Database = strings.TrimSpace(strings.TrimPrefix(text, "# CONTEXT-DATABASE:"))
		return false
	case strings.HasPrefix(text, "#"):
		return false
	case im.place.Section == sectionDDL:
		return false // CREATE DATABASE …: the tenant is the database
	}
	return im.database == "" || im.place.Database == im.database
}

// write writes one batch: body holds points as lines of line protocol,
// and lines the file's line numbers of each. Points the decoder or the
// engine refuses are written to the refused file and the rest written
// again, until the batch is written or a write fails.
func (im *importer) write(ctx context.Context, body []byte, lines [][]int) error {
	for len(lines) > 0 {
		tables, err := lineproto.Decode(body, lineproto.Options{Limits: im.limits, Now: im.now()})
		var lerr *lineproto.Error
		if errors.As(err, &lerr) {
			body, lines, err = im.refuse(body, lines, lerr.Problems)
			if err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		parts := make([]engine.TableEvents, len(tables))
		n := 0
		for i, t := range tables {
			parts[i] = engine.TableEvents{Table: t.Name, Events: t.Events}
			n += t.Events.Len()
		}
		written, err := im.db.WriteTables(ctx, im.tenant, parts)
		var te *engine.TableError
		var rate *engine.TableRateError
		switch {
		case err == nil:
			im.place.Written += written
			return nil
		case errors.As(err, &te):
			problems, rerr := ingest.LineProblems(tables[te.Index], te.Err)
			if rerr != nil {
				return rerr
			}
			// The table's lines are numbered in body: renumber them.
			body, lines, err = im.refuse(body, lines, problems)
			if err != nil {
				return err
			}
		case errors.As(err, &rate):
			fmt.Fprintf(im.stderr, "%s: waiting %s for the next hour's table budget\n", rate.Msg, rate.RetryAfter.Round(time.Second))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rate.RetryAfter):
			}
		default:
			return fmt.Errorf("write lines %d to %d: %w", lines[0][0], lines[len(lines)-1][0], err)
		}
	}
	return nil
}

// refuse writes the points of body that problems name (numbered from 1
// in body) to the refused file, each after a comment naming its lines in
// the file and the reason, and returns body and lines without them.
func (im *importer) refuse(body []byte, lines [][]int, problems []lineproto.Problem) ([]byte, [][]int, error) {
	reason := make(map[int]string, len(problems))
	for _, p := range problems {
		reason[p.Line] = p.Reason
	}
	if im.refused == nil {
		f, err := os.OpenFile(im.refusedPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, err
		}
		im.refused = f
	}
	w := bufio.NewWriter(im.refused)
	var kept []byte
	var keptLines [][]int
	i := 0
	for line := range bytes.Lines(body) {
		i++
		why, bad := reason[i]
		if !bad {
			kept = append(kept, line...)
			keptLines = append(keptLines, lines[i-1])
			continue
		}
		im.place.Refused++
		where := lineNumbers(lines[i-1])
		if im.place.Refused <= maxReported {
			fmt.Fprintf(im.stderr, "%s: %s\n", where, why)
		} else if im.place.Refused == maxReported+1 {
			fmt.Fprintf(im.stderr, "(more refused points are written to %s only)\n", im.refusedPath)
		}
		fmt.Fprintf(w, "# %s: %s\n", where, strings.ReplaceAll(why, "\n", " "))
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		return nil, nil, err
	}
	// The refused points are on disk before the checkpoint that passes
	// them is. A run killed between the two refuses them again when it
	// resumes: the file may then name a point twice.
	if err := im.refused.Sync(); err != nil {
		return nil, nil, err
	}
	return kept, keptLines, nil
}

// lineNumbers names the file's lines of a point: "line 8", or "lines
// 8, 10, 12".
func lineNumbers(lines []int) string {
	if len(lines) == 1 {
		return fmt.Sprintf("line %d", lines[0])
	}
	parts := make([]string, len(lines))
	for i, n := range lines {
		parts[i] = strconv.Itoa(n)
	}
	return "lines " + strings.Join(parts, ", ")
}

func (im *importer) closeRefused() error {
	if im.refused == nil {
		return nil
	}
	return im.refused.Close()
}

// save writes the checkpoint, atomically: a crash leaves the old one or
// the new one.
func (im *importer) save() error {
	b, err := json.Marshal(im.place)
	if err != nil {
		return err
	}
	tmp := im.checkpointPath + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, im.checkpointPath)
}
