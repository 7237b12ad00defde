package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/timetabledb/timetable/event"
)

// writeFlags are the flags of `timetable write`.
type writeFlags struct {
	table, series, precision string
	batch                    int
}

// maxLine bounds one line of input: an event is at most 400 KB stored,
// and a line may hold whitespace besides.
const maxLine = 16 << 20

// maxReported bounds the bad lines write names one by one.
const maxReported = 20

func newWriteCmd(g *globals) *cobra.Command {
	var f writeFlags
	cmd := &cobra.Command{
		Use:   "write --table T [--series S] [FILE|-]",
		Short: "Write NDJSON events from a file or standard input",
		Long: `write reads events, one JSON object a line, from FILE or from standard input
(no FILE, or -), and writes them to a logical table of a tenant in batches of
--batch events:

  {"time": "2017-04-10T12:00:00.123456Z", "series": "car-17", "fields": {"speed": 88.5}}

A bad line is skipped and named with its line number and reason on standard
error; the others are written, and write exits with status 1. Writing the
same file again stores nothing twice. --series gives a series to the events
that have none. A progress bar shows on standard error when it is a terminal,
and a summary line ends the run.

It writes to the store, or with --server (or TIMETABLE_SERVER) to a running
server, with the API key in TIMETABLE_API_KEY, whose tenant it names; the
events are sent as NDJSON, a request per batch (or more, to keep each under
the server's 16 MiB and 100,000 events).`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWrite(cmd, g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.table, "table", "", "logical table")
	fl.StringVar(&f.series, "series", "", "series of the events that have none")
	fl.IntVar(&f.batch, "batch", 5000, "events per write")
	fl.StringVar(&f.precision, "precision", "", "unit of integer times: s, ms, us or ns (default ms, refusing times before 2001 as ms)")
	fl.String("tenant", "", "tenant (default $"+EnvTenant+"; with --server, the API key's)")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

// runWrite reads the input and writes it batch by batch.
func runWrite(cmd *cobra.Command, g *globals, f writeFlags, args []string) (err error) {
	if f.batch < 1 {
		return usageErrorf("--batch %d: use a positive number", f.batch)
	}
	precision, err := event.ParsePrecision(f.precision)
	if err != nil {
		return usageErrorf("--%v", err)
	}
	in, size, closeIn, err := openInput(cmd, args)
	if err != nil {
		return err
	}
	defer closeIn()

	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	w := &batchWriter{series: f.series, report: stderr}
	closeTarget, err := g.openWriteTarget(cmd, f.table, w)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeTarget()) }()
	w.limits.Precision = precision

	bar := newProgress(stderr, size)
	start := time.Now()
	err = w.run(ctx, in, f.batch, bar)
	elapsed := time.Since(start)
	if bar != nil {
		_ = bar.Finish() // and clears the bar
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(w.written) / elapsed.Seconds()
	}
	fmt.Fprintf(stderr, "wrote %s to %s, %s, in %s (%.0f events/s)\n",
		count(w.written, "event"), f.table, count(w.bad, "bad line"), elapsed.Round(time.Millisecond), rate)
	if err != nil {
		return err
	}
	if w.bad > 0 {
		return fmt.Errorf("%s not written", count(w.bad, "bad line"))
	}
	return nil
}

// openWriteTarget sets where w writes: to the server --server names, or
// to the store, which the returned close closes.
func (g *globals) openWriteTarget(cmd *cobra.Command, table string, w *batchWriter) (close func() error, err error) {
	ctx := cmd.Context()
	r, err := g.remote(apiKeyCredential)
	if err != nil {
		return nil, err
	}
	if r != nil {
		if err := noTenantFlag(cmd); err != nil {
			return nil, err
		}
		// The server checks the events again, with its own limits and
		// clock; these catch a bad line before the server refuses its
		// batch.
		clk, err := g.clock()
		if err != nil {
			return nil, err
		}
		w.now = clk.Now
		w.write = func(ctx context.Context, events event.Batch) (int, error) {
			return r.writeEvents(ctx, table, events)
		}
		return func() error { return nil }, nil
	}
	tenant, err := tenantName(cmd.Flags())
	if err != nil {
		return nil, err
	}
	s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn})
	if err != nil {
		return nil, err
	}
	if err := s.tenant(ctx, tenant); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	w.limits, w.now = s.db.Options().Limits, s.clock.Now
	w.write = func(ctx context.Context, events event.Batch) (int, error) {
		return s.db.WriteBatch(ctx, tenant, table, events)
	}
	return s.Close, nil
}

// openInput opens the file named by args, or standard input, and returns
// its size when known (-1 otherwise).
func openInput(cmd *cobra.Command, args []string) (io.Reader, int64, func(), error) {
	if len(args) == 0 || args[0] == "-" {
		in := cmd.InOrStdin()
		if isTerminal(in) {
			fmt.Fprintln(cmd.ErrOrStderr(), "reading events from standard input, one JSON object a line; end with Ctrl-D")
		}
		return in, -1, func() {}, nil
	}
	file, err := os.Open(args[0])
	if err != nil {
		return nil, 0, nil, err
	}
	size := int64(-1)
	if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return file, size, func() { file.Close() }, nil
}

// newProgress returns a progress bar of size bytes (a spinner when the
// size is unknown) when w is a terminal, and nil otherwise.
func newProgress(w io.Writer, size int64) *progressbar.ProgressBar {
	if !isTerminal(w) {
		return nil
	}
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("writing"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
}

// isTerminal reports whether f is a file that is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// batchWriter writes NDJSON input batch by batch, skipping bad lines.
type batchWriter struct {
	write  func(ctx context.Context, events event.Batch) (int, error)
	limits event.Limits
	now    func() time.Time
	series string
	report io.Writer // bad lines are named here

	written, bad int
}

// run reads in to the end, writing every batch events.
//
// When ctx ends (Ctrl-C), run stops reading, writes the lines it has read
// (a write under way finishes: writes do not take ctx's cancellation), and
// returns ctx's error, so the command exits with ExitInterrupted having
// stored everything it read. Reading happens on a goroutine of its own, as
// a read from a terminal or a pipe blocks until a line comes; it is left
// blocked when ctx ends, and ends with the process.
func (w *batchWriter) run(ctx context.Context, in io.Reader, batch int, bar *progressbar.ProgressBar) error {
	wctx := context.WithoutCancel(ctx)
	lines := make(chan []byte)
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 1<<20), maxLine)
		for sc.Scan() {
			select {
			case lines <- bytes.Clone(sc.Bytes()):
			case <-ctx.Done():
				return
			}
		}
		done <- sc.Err()
	}()

	var body []byte
	var numbers []int // the line number of each line of body
	lineNo := 0
	flush := func() error {
		if len(numbers) == 0 {
			return nil
		}
		err := w.flush(wctx, body, numbers)
		body, numbers = body[:0], numbers[:0]
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if err := flush(); err != nil {
				return err
			}
			return ctx.Err()
		case err := <-done:
			if err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					return fmt.Errorf("line %d: longer than %d bytes", lineNo+1, maxLine)
				}
				return fmt.Errorf("read input: %w", err)
			}
			return flush()
		case line := <-lines:
			lineNo++
			if bar != nil {
				_ = bar.Add(len(line) + 1)
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			body = append(append(body, line...), '\n')
			numbers = append(numbers, lineNo)
			if len(numbers) == batch {
				if err := flush(); err != nil {
					return err
				}
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
	}
}

// flush decodes and writes one batch: body holds one event a line, and
// lines their line numbers in the input.
func (w *batchWriter) flush(ctx context.Context, body []byte, lines []int) error {
	events, err := event.DecodeNDJSON(body, w.limits, w.now())
	var be *event.BatchError
	switch {
	case errors.As(err, &be):
		// Decode again without the bad lines.
		bad := w.skip(be.Problems, lines)
		var kept []byte
		var keptLines []int
		for i, line := range bytes.SplitAfter(body, []byte("\n")) {
			if i < len(lines) && !bad[i] {
				kept = append(kept, line...)
				keptLines = append(keptLines, lines[i])
			}
		}
		body, lines = kept, keptLines
		if events, err = event.DecodeNDJSON(body, w.limits, w.now()); err != nil {
			return fmt.Errorf("lines %d to %d: %w", lines[0], lines[len(lines)-1], err)
		}
	case errors.Is(err, event.ErrMalformedBody):
		// No line of the batch is a JSON object.
		w.bad += len(lines)
		w.say("lines %d to %d: not JSON objects\n", lines[0], lines[len(lines)-1])
		return nil
	case err != nil:
		return err
	}
	if events.Len() == 0 {
		return nil
	}
	if w.series != "" {
		// Edited events are events to validate again.
		if events, err = w.withSeries(events.Events()); err != nil {
			return fmt.Errorf("lines %d to %d: %w", lines[0], lines[len(lines)-1], err)
		}
	}
	n, err := w.write(ctx, events)
	if errors.As(err, &be) {
		// Refused by the engine (a stored item over DynamoDB's size):
		// write the others.
		bad := w.skip(be.Problems, lines)
		var keep []event.Event
		for i, e := range events.Events() {
			if !bad[i] {
				keep = append(keep, e)
			}
		}
		if len(keep) == 0 {
			return nil
		}
		if events, err = event.Check(keep, w.limits, w.now()); err != nil {
			return fmt.Errorf("lines %d to %d: %w", lines[0], lines[len(lines)-1], err)
		}
		n, err = w.write(ctx, events)
	}
	w.written += n
	if err != nil {
		return fmt.Errorf("write lines %d to %d (writing the input again is safe, nothing is stored twice): %w", lines[0], lines[len(lines)-1], err)
	}
	return nil
}

// withSeries gives the events without a series the --series one, and
// checks them again.
func (w *batchWriter) withSeries(events []event.Event) (event.Batch, error) {
	for i := range events {
		if events[i].Series == "" {
			events[i].Series = w.series
		}
	}
	return event.Check(events, w.limits, w.now())
}

// skip counts and names bad events, and returns their indexes.
func (w *batchWriter) skip(problems []event.Problem, lines []int) map[int]bool {
	bad := make(map[int]bool, len(problems))
	for _, p := range problems {
		bad[p.Index] = true
		w.bad++
		switch {
		case w.bad <= maxReported:
			w.say("line %d: %s\n", lines[p.Index], flagHint.Replace(p.Reason))
		case w.bad == maxReported+1:
			w.say("(more bad lines are counted, not named)\n")
		}
	}
	return bad
}

// flagHint rewrites the request parameter a reason names (the HTTP
// API's precision=s) as the flag that says it here.
var flagHint = strings.NewReplacer("precision=ms", "--precision ms", "precision=s", "--precision s")

func (w *batchWriter) say(format string, args ...any) {
	fmt.Fprintf(w.report, format, args...)
}
