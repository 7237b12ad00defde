package bench

// Disk measures what the peer comparison's events take on disk, on
// fewer of them (diskEvents, the first of the workload), in the two
// states an operator sees: a running server some seconds after the last
// write, and the server's data once flushed as the peer comparison
// flushes it (timetable: stopped and `timetable compact`; InfluxDB: its
// cache snapshotted; VictoriaMetrics: /internal/force_flush). timetable
// is measured on Pebble with the row layout and with the chunk layout
// (the default family's tables of chunks), of the default window (an
// hour, which holds two or so of a series' readings, one every 33.6
// minutes) and of a day's, beside InfluxDB and VictoriaMetrics, each
// written by one client in the peer comparison's requests of 5,000
// events.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/family"
)

// diskEvents is how many of the workload's events the disk part writes.
const diskEvents = 100_000

// diskIdleWait is how long after its last write a running server's disk
// is measured: past the Pebble store's idle flush and the compaction of
// what it flushed (pebblestore.DefaultIdleFlush, 5 s, which flushes
// within two of it and compacts at once) and InfluxDB's snapshot of a
// cold cache (a second, as the peer comparison configures it).
const diskIdleWait = 12 * time.Second

// diskUnit is the unit of the disk rows, printed with two decimals
// where "MiB" rows print none.
const diskUnit = "MiB stored"

// diskSizes is what one system's data took.
type diskSizes struct {
	running, flushed float64 // MiB
}

// Disk writes diskEvents events to timetable (rows and chunks), InfluxDB
// and VictoriaMetrics, one at a time, and reports their disk.
func Disk(ctx context.Context, o Options, r *Report) error {
	if o.Timetable == "" {
		r.Notes = append(r.Notes, "disk figures skipped: no -timetable binary (make bench builds bin/timetable)")
		return nil
	}
	w := newPeerWorkload(time.Now())
	batches := w.batches(peerBatch)[:diskEvents/peerBatch]
	systems := []peer{
		&timetablePeer{bin: o.Timetable, layout: string(family.LayoutRow)},
		&timetablePeer{bin: o.Timetable, layout: string(family.LayoutChunk)},
		&timetablePeer{bin: o.Timetable, layout: string(family.LayoutChunk), chunkWindow: "24h"},
		&influxPeer{},
		&victoriaPeer{},
	}
	sizes := make([]diskSizes, len(systems))
	for i, p := range systems {
		dir := filepath.Join(o.Dir, "disk-"+strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(strings.ToLower(p.name())))
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		var err error
		if sizes[i], err = measureDisk(ctx, p, dir, batches, o.Progress); err != nil {
			return fmt.Errorf("disk of %s: %w", p.name(), err)
		}
		o.Progress(fmt.Sprintf("disk: %s %.1f MiB running, %.1f MiB flushed", p.name(), sizes[i].running, sizes[i].flushed))
	}
	influx, victoria := sizes[3], sizes[4]
	for i, layout := range []string{"row layout", "chunk layout", "chunk layout of day windows"} {
		ts := sizes[i]
		what := fmt.Sprintf("disk, %d events, timetable on Pebble, %s", diskEvents, layout)
		r.Rows = append(r.Rows,
			Row{Figure: what + fmt.Sprintf(", running, %v after the last write", diskIdleWait), Value: ts.running, Unit: diskUnit, Baseline: "InfluxDB, the same", Base: influx.running, Aim: "<= 1.0 of InfluxDB"},
			Row{Figure: "the same, running", Value: ts.running, Unit: diskUnit, Baseline: "VictoriaMetrics, the same", Base: victoria.running},
			Row{Figure: what + ", flushed (timetable compact)", Value: ts.flushed, Unit: diskUnit, Baseline: "InfluxDB, cache snapshotted", Base: influx.flushed, Aim: "<= 1.0 of InfluxDB"},
			Row{Figure: "the same, flushed", Value: ts.flushed, Unit: diskUnit, Baseline: "VictoriaMetrics, force_flush", Base: victoria.flushed},
		)
	}
	r.Notes = append(r.Notes, fmt.Sprintf("disk: the first %d events of the peer comparison's workload, written by one client in requests of %d, the data dir less what it held empty, blocks preallocated past a file's end not counted; running: %v after the last write, the server still up; flushed: as the peer comparison flushes", diskEvents, peerBatch, diskIdleWait))
	return nil
}

// measureDisk starts p in dir, writes the batches, and measures its data
// dir while it runs, diskIdleWait after the last write, and once flushed.
func measureDisk(ctx context.Context, p peer, dir string, batches [][]reading, progress func(string)) (sizes diskSizes, err error) {
	progress("disk: starting " + p.name())
	d, err := p.start(ctx, dir, progress)
	if d != nil {
		defer func() { err = errors.Join(err, d.Stop()) }()
	}
	if err != nil {
		return sizes, err
	}
	defer p.close()
	empty, err := diskUsage(p.dataDir())
	if err != nil {
		return sizes, err
	}
	for _, b := range batches {
		if err := p.write(b)(ctx); err != nil {
			return sizes, fmt.Errorf("write: %w", err)
		}
	}
	select {
	case <-ctx.Done():
		return sizes, ctx.Err()
	case <-time.After(diskIdleWait):
	}
	running, err := diskUsage(p.dataDir())
	if err != nil {
		return sizes, err
	}
	if kinds, err := diskByKind(p.dataDir()); err == nil {
		progress(fmt.Sprintf("disk: %s running: %s", p.name(), kinds))
	}
	if err := p.flush(ctx); err != nil {
		return sizes, fmt.Errorf("flush: %w", err)
	}
	flushed, err := diskUsage(p.dataDir())
	if err != nil {
		return sizes, err
	}
	if kinds, err := diskByKind(p.dataDir()); err == nil {
		progress(fmt.Sprintf("disk: %s flushed: %s", p.name(), kinds))
	}
	return diskSizes{running: float64(running-empty) / (1 << 20), flushed: float64(flushed-empty) / (1 << 20)}, nil
}

// diskByKind says where dir's bytes are: the files' sizes summed by name
// extension (".sst" and ".log" for Pebble's sstables and write-ahead
// logs), largest first, for the progress lines that say what a running
// server's disk holds beside its total.
func diskByKind(dir string) (string, error) {
	byExt := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed as we walk
			}
			return err
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		ext := filepath.Ext(e.Name())
		if ext == "" || len(ext) > 6 {
			ext = "other"
		}
		byExt[ext] += info.Size()
		return nil
	})
	if err != nil {
		return "", err
	}
	exts := slices.SortedFunc(maps.Keys(byExt), func(a, b string) int { return cmp.Compare(byExt[b], byExt[a]) })
	parts := make([]string, len(exts))
	for i, ext := range exts {
		parts[i] = fmt.Sprintf("%s %.2f MiB", ext, float64(byExt[ext])/(1<<20))
	}
	return strings.Join(parts, ", "), nil
}
