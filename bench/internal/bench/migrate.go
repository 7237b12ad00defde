package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// migrateStep is the time between two of the migrate part's events, which
// spreads them over a few weekly tables.
const migrateStep = 50 * time.Millisecond

// Migrate measures `timetable migrate` from the embedded store into the
// DynamoDB-API server of the standard AWS configuration chain (dynalite
// under `make bench`), next to `timetable write` of the same events
// straight into it, the way users moved stores before there was a migration;
// and the migration's peak resident memory at two sizes four times apart,
// which a copy a page at a time keeps flat. The migration's time includes
// its verification: both sides scanned once more. It runs only when
// TIMETABLE_DYNAMODB_ENDPOINT is set.
func Migrate(ctx context.Context, o Options, r *Report) error {
	if os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT") == "" {
		r.Notes = append(r.Notes, "migrate figures skipped: TIMETABLE_DYNAMODB_ENDPOINT is not set (make bench starts dynalite)")
		return nil
	}
	if o.Timetable == "" {
		return fmt.Errorf("migrate: no timetable binary: give -timetable (make bench builds bin/timetable)")
	}
	dir := filepath.Join(o.Dir, "migrate")
	small := max(o.Events/20, 5000)
	sizes := []int{small, 4 * small}
	var (
		rates [2]float64
		peaks [2]float64
	)
	for i, n := range sizes {
		rate, peak, err := migrateRun(ctx, o.Timetable, filepath.Join(dir, fmt.Sprint(n)), n, fmt.Sprintf("benchmig%d", i))
		if err != nil {
			return fmt.Errorf("migrate of %d events: %w", n, err)
		}
		rates[i], peaks[i] = rate, peak
		o.Progress(fmt.Sprintf("migrate of %d events, Pebble to DynamoDB: %.0f ev/s, peak RSS %.1f MiB", n, rate, peak))
	}
	write, err := writeRun(ctx, o.Timetable, filepath.Join(dir, "write"), small, "benchwrite")
	if err != nil {
		return fmt.Errorf("timetable write of %d events: %w", small, err)
	}
	o.Progress(fmt.Sprintf("timetable write of %d events into DynamoDB: %.0f ev/s", small, write))
	r.Rows = append(r.Rows,
		Row{Figure: fmt.Sprintf("migrate Pebble to DynamoDB API, %d events, verified", small), Value: rates[0], Unit: "ev/s",
			Baseline: "timetable write --store dynamodb, same events", Base: write},
		Row{Figure: fmt.Sprintf("migrate Pebble to DynamoDB API, %d events, verified", sizes[1]), Value: rates[1], Unit: "ev/s"},
		Row{Figure: fmt.Sprintf("migrate peak RSS, %d events", sizes[1]), Value: peaks[1], Unit: "MiB",
			Baseline: fmt.Sprintf("%d events", small), Base: peaks[0], Aim: "within 16 MiB of the baseline"},
	)
	return nil
}

// migrateRun writes n events into a new embedded store with the binary,
// then times its migration into DynamoDB, under table names starting
// with id, and returns the migration's events a second and peak RSS.
func migrateRun(ctx context.Context, bin, dir string, n int, id string) (rate, peakMiB float64, err error) {
	cfg, env, cleanup, err := migrateSetup(dir, n, id)
	if err != nil {
		return 0, 0, err
	}
	defer cleanup()
	src := "pebble:" + filepath.Join(dir, "source")
	if _, err := runTimetable(ctx, env, bin, "--config", cfg, "--store", src, "tenant", "add", "acme"); err != nil {
		return 0, 0, err
	}
	if _, err := runTimetable(ctx, env, bin, "--config", cfg, "--store", src, "write", "--tenant", "acme", "--table", "cars", filepath.Join(dir, "events.ndjson")); err != nil {
		return 0, 0, err
	}
	began := time.Now()
	peak, err := runTimetablePeak(ctx, env, bin, "--config", cfg, "migrate", "--from", src, "--to", "dynamodb")
	if err != nil {
		return 0, 0, err
	}
	took := time.Since(began)
	return float64(n) / took.Seconds(), peak, nil
}

// runTimetablePeak runs the binary as runTimetable does and returns its
// peak resident memory in MiB: its VmHWM, read every 20 ms while it runs
// (the last reading before it exits). Not the rusage's maxrss, which
// Linux carries over from the parent at fork: a child of this benchmark,
// grown by its earlier parts, would report the benchmark's own peak.
func runTimetablePeak(ctx context.Context, env []string, bin string, args ...string) (float64, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := fmt.Sprint(cmd.Process.Pid)
	peak := 0.0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return 0, fmt.Errorf("timetable %s: %w: %s", strings.Join(args, " "), err, stderr.String())
			}
			return peak, nil
		case <-tick.C:
			peak = max(peak, peakRSSOf(pid))
		}
	}
}

// writeRun times `timetable write` of n events straight into DynamoDB.
func writeRun(ctx context.Context, bin, dir string, n int, id string) (float64, error) {
	cfg, env, cleanup, err := migrateSetup(dir, n, id)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	if _, err := runTimetable(ctx, env, bin, "--config", cfg, "--store", "dynamodb", "tenant", "add", "acme"); err != nil {
		return 0, err
	}
	began := time.Now()
	if _, err := runTimetable(ctx, env, bin, "--config", cfg, "--store", "dynamodb", "write", "--tenant", "acme", "--table", "cars", filepath.Join(dir, "events.ndjson")); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(began).Seconds(), nil
}

// migrateSetup writes n events as NDJSON and a configuration naming
// tables after id into dir, and returns the configuration, the
// environment to run the binary in (its clock just after the last event)
// and a function deleting id's DynamoDB tables.
func migrateSetup(dir string, n int, id string) (cfg string, env []string, cleanup func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, nil, err
	}
	f, err := os.Create(filepath.Join(dir, "events.ndjson"))
	if err != nil {
		return "", nil, nil, err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	gen := newGenerator(start, migrateStep)
	for i := range n {
		e := gen.event(i)
		if err := enc.Encode(map[string]any{"time": e.Time.Format(time.RFC3339Nano), "series": e.Series, "fields": e.Fields}); err != nil {
			f.Close()
			return "", nil, nil, err
		}
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return "", nil, nil, err
	}
	cfg = filepath.Join(dir, "timetable.yaml")
	if err := os.WriteFile(cfg, []byte("families:\n  - name: events\n    prefix: "+id+"_ev_\nmeta_table: "+id+"_meta\n"), 0o644); err != nil {
		return "", nil, nil, err
	}
	now := start.Add(time.Duration(n)*migrateStep + time.Minute)
	env = append(os.Environ(), "TIMETABLE_NOW="+now.Format(time.RFC3339))
	return cfg, env, func() { dropTables(id + "_") }, nil
}

// dropTables deletes the DynamoDB tables whose names start with prefix.
func dropTables(prefix string) {
	ctx := context.Background()
	s, err := dynamostore.Open(ctx, dynamostore.Options{})
	if err != nil {
		return
	}
	defer s.Close()
	var names []string
	_ = s.ListTables(ctx, prefix, func(name string) bool {
		if !strings.HasPrefix(name, prefix) {
			return false
		}
		names = append(names, name)
		return true
	})
	off := false
	for _, n := range names {
		_ = s.UpdateTable(ctx, n, storage.TableUpdate{DeletionProtection: &off})
		_ = s.DeleteTable(ctx, n)
	}
}

// runTimetable runs the binary and returns its state once it exited 0.
func runTimetable(ctx context.Context, env []string, bin string, args ...string) (*os.ProcessState, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("timetable %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return cmd.ProcessState, nil
}
