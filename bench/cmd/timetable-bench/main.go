// Command timetable-bench prints timetable's benchmark table: `make bench`.
// Every figure and its baseline come from the same run; with -page it also
// writes them as docs/benchmarks.md, with the machine, Go and commit. After it, it
// prints the peer comparison, measured first (twice, -peer-runs): timetable's server beside InfluxDB, PostgreSQL,
// VictoriaMetrics and ClickHouse, which it installs (with apt-get, as root) when they
// are missing; -peers only runs just that.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/timetabledb/timetable/bench/internal/bench"
)

func main() {
	if bench.QuietReaderMain() {
		return
	}
	o := bench.Options{}
	flag.IntVar(&o.Runs, "runs", 3, "measure each figure this many times and keep the median")
	flag.IntVar(&o.Events, "events", 200000, "events per ingest run")
	flag.IntVar(&o.Writers, "writers", 2, "concurrent writers, for timetable and baselines alike")
	flag.IntVar(&o.Batch, "batch", 1000, "events per library write and per raw batch")
	flag.IntVar(&o.HTTPBatch, "http-batch", 5000, "events per HTTP request")
	flag.IntVar(&o.Series, "series", 100000, "series of the latest-10 of every series")
	flag.StringVar(&o.Timetable, "timetable", "", "the timetable binary the peer comparison serves from (make bench builds bin/timetable)")
	peers := flag.String("peers", "with", "the peer comparison: with the rest, only, or without")
	flag.IntVar(&o.MQTTMessages, "mqtt-messages", 50000, "messages of one event per MQTT ingest run")
	only := flag.String("only", "", "measure only this part of the table: embedded, aggregate, manyseries, dynamo, layouts, chunks, disk, mqtt, archive, fence, migrate, influximport or limits")
	flag.Func("peer-systems", "run the peer comparison of only these systems, comma-separated: timetable (chunk layout), timetable-packed (chunk layout queried after timetable compact), timetable-row, InfluxDB, PostgreSQL, VictoriaMetrics, ClickHouse (all by default)", func(v string) error {
		o.PeerSystems = strings.Split(v, ",")
		return nil
	})
	flag.IntVar(&o.PeerRuns, "peer-runs", 2, "run the peer comparison this many times and print the median of each figure, with the spread in notes")
	flag.StringVar(&o.PeerProfile, "peers-cpuprofile", "", "write CPU profiles of timetable's server over the peer ingest and each peer query into this directory (go tool pprof -top bin/timetable DIR/timetable-query1-*.pb.gz reads those of the first query)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	page := flag.String("page", "", "write the run as the Markdown page docs/benchmarks.md to this file (make bench does)")
	flag.Parse()
	if *peers != "with" && *peers != "only" && *peers != "without" {
		fmt.Fprintln(os.Stderr, "timetable-bench: -peers is with, only or without")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
	}
	// SIGINT or SIGTERM ends the run; the peers' servers are stopped on
	// the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, *peers, *only, *page)
	stop()
	if err != nil {
		fail(err)
	}
	pprof.StopCPUProfile()
}

func run(ctx context.Context, o bench.Options, peers, only, page string) error {
	dir, err := os.MkdirTemp("", "timetable-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.Dir = dir
	o.Progress = func(s string) { fmt.Fprintln(os.Stderr, "bench:", s) }

	// The peer comparison runs first, on a machine the other parts have
	// not yet loaded (the first peer, timetable, once met one still busy
	// after the DynamoDB parts), and prints last.
	machine := bench.ThisMachine(".", runFlags())
	var peerReport *bench.PeerReport
	if peers != "without" && only == "" {
		peerReport, err = bench.PeerRuns(ctx, o)
		if err != nil {
			return err
		}
	}
	var report *bench.Report
	if peers != "only" {
		r := &bench.Report{}
		report = r
		r.Notes = append(r.Notes, fmt.Sprintf("%d-byte events, %d per run, median of %d runs, %d writers, GOMAXPROCS=%d", bench.EventBytes, o.Events, o.Runs, o.Writers, runtime.GOMAXPROCS(0)))
		for _, part := range []struct {
			name string
			run  func(context.Context, bench.Options, *bench.Report) error
		}{
			{"embedded", bench.Embedded}, {"mqtt", bench.MQTT}, {"aggregate", bench.Aggregate},
			{"manyseries", bench.ManySeries}, {"dynamo", bench.Dynamo}, {"layouts", bench.Layouts},
			{"chunks", bench.Chunks}, {"disk", bench.Disk},
			{"archive", bench.Archive}, {"fence", bench.Fence}, {"migrate", bench.Migrate},
			{"influximport", bench.InfluxImport},
			{"limits", bench.Limits},
		} {
			if only != "" && only != part.name {
				continue
			}
			if err := part.run(ctx, o, r); err != nil {
				return err
			}
		}
		r.Rows = append(r.Rows, bench.Row{Figure: "peak memory (whole run)", Value: bench.PeakRSS(), Unit: "MiB"})
		r.Print(os.Stdout)
	}
	if peerReport != nil {
		fmt.Println()
		peerReport.Print(os.Stdout)
	}
	if page != "" {
		if err := bench.WritePage(page, machine, report, peerReport); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", page)
	}
	return nil
}

// runFlags returns the flags the run was given that change what it
// measures, for the page: not the paths of files.
func runFlags() []string {
	var out []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "timetable", "page", "cpuprofile", "peers-cpuprofile":
			return
		}
		out = append(out, "-"+f.Name+"="+f.Value.String())
	})
	return out
}

func fail(err error) {
	pprof.StopCPUProfile()
	fmt.Fprintln(os.Stderr, "timetable-bench:", err)
	os.Exit(1)
}
