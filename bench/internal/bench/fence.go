package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/fenceload"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// fenceDuration is how long each store's run of Fence lasts.
const fenceDuration = time.Minute

// Fence runs archiving under load (package fenceload) for a minute on
// Pebble and, when TIMETABLE_DYNAMODB_ENDPOINT is set, on DynamoDB:
// reconcilers whose clocks run a day ahead archive and delete the
// oldest day's table under three writers, again and again. It reports
// the events acknowledged, and of them those a query answers afterwards,
// misses (the aim: none) and answers twice (none).
func Fence(ctx context.Context, o Options, r *Report) error {
	run := func(name string, s storage.Store, cfg family.Schema) error {
		res, err := fenceload.Run(ctx, s, cfg, fenceload.Options{Dir: filepath.Join(o.Dir, "fence-"+name), Duration: fenceDuration})
		if err != nil {
			return fmt.Errorf("fence load on %s: %w", name, err)
		}
		o.Progress(fmt.Sprintf("fence load on %s: %s", name, res))
		r.Rows = append(r.Rows,
			Row{Figure: fmt.Sprintf("fence load on %s, %v: events acknowledged", name, fenceDuration), Value: float64(res.Acknowledged), Unit: "events"},
			Row{Figure: fmt.Sprintf("fence load on %s: acknowledged and answered", name), Value: float64(res.Answered), Unit: "events", Aim: "all acknowledged"},
			Row{Figure: fmt.Sprintf("fence load on %s: acknowledged and not answered (lost)", name), Value: float64(res.Lost), Unit: "events", Aim: "0"},
			Row{Figure: fmt.Sprintf("fence load on %s: answered twice", name), Value: float64(res.Duplicated), Unit: "events", Aim: "0"},
			Row{Figure: fmt.Sprintf("fence load on %s: generation the oldest day's table reached", name), Value: float64(res.Generations), Unit: ""},
		)
		return nil
	}

	s, err := pebblestore.Open(filepath.Join(o.Dir, "fence-store"), pebblestore.Options{})
	if err != nil {
		return err
	}
	cfg := family.DefaultSchema()
	cfg.MetaTable = engine.DefaultMetaTable
	err = run("Pebble", s, cfg)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}

	if os.Getenv("TIMETABLE_DYNAMODB_ENDPOINT") == "" {
		r.Notes = append(r.Notes, "fence load on DynamoDB skipped: TIMETABLE_DYNAMODB_ENDPOINT is not set (make bench starts dynalite)")
		return nil
	}
	ds, _, _, _, err := openDynamo(ctx)
	if err != nil {
		return err
	}
	defer ds.Close()
	cfg = family.DefaultSchema()
	cfg.Families[0].Prefix = "benchfence_ev_"
	cfg.MetaTable = "benchfence_meta"
	defer func() {
		// Every table the run made, its meta table's too.
		var names []string
		_ = ds.ListTables(context.Background(), "benchfence_", func(name string) bool {
			if !strings.HasPrefix(name, "benchfence_") {
				return name < "benchfence_"
			}
			names = append(names, name)
			return true
		})
		for _, n := range names {
			_ = ds.DeleteTable(context.Background(), n)
		}
	}()
	return run("DynamoDB", ds, cfg)
}
