package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

func newReconcileCmd(g *globals) *cobra.Command {
	var now, format string
	var dryRun, future bool
	cmd := &cobra.Command{
		Use:   "reconcile [--now TIME] [--dry-run] [--format table|json]",
		Short: "Create, dial down, archive and delete tables as the families' policies say, once",
		Long: `reconcile runs one cycle of the lifecycle manager, the one timetable serve
runs every few minutes: it creates the next period's table ahead of its
start, moves tables through their capacity tiers as they age, enables TTL,
archives tables past retention and deletes them once their archive is
verified. Each action is listed with its reason and result: done, dry-run,
deferred: <why> (the store refused for now, e.g. DynamoDB's daily limit on
capacity decreases; the next cycle tries again) or failed: <why>.

--dry-run shows the plan and changes nothing. --now plans as if it were
that time (RFC 3339 or Unix milliseconds), to see what will happen: a --now
later than the clock is refused without --dry-run, for applying it would
create the future's tables and dial down the tables taking today's writes.

With --server (or TIMETABLE_SERVER), --dry-run shows the plan of the
lifecycle manager running in that server, through its admin API with the
admin token in TIMETABLE_ADMIN_TOKEN; the server runs its cycles itself, so
reconcile without --dry-run does not go through it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			srv, err := g.remote(adminTokenCredential)
			if err != nil {
				return err
			}
			if srv != nil {
				if !dryRun {
					return usageErrorf("reconcile with --server: the server runs the lifecycle itself, every --reconcile-interval; add --dry-run to see its plan")
				}
				if now != "" {
					return usageErrorf("--now with --server: the server plans at its own time; leave --now out, or plan on the store without --server")
				}
				reports, err := srv.plan(ctx)
				if err != nil {
					return err
				}
				return writeReports(cmd.OutOrStdout(), format, reports)
			}
			log, err := g.logger(cmd.ErrOrStderr(), slog.LevelWarn)
			if err != nil {
				return err
			}
			clk, err := g.clock()
			if err != nil {
				return err
			}
			if now != "" {
				t, err := event.ParseTime(now)
				if err != nil {
					return usageErrorf("--now %q: %v", now, err)
				}
				if err := checkNow(t, clk.Now(), dryRun, future); err != nil {
					return err
				}
				clk = clock.NewManual(t)
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			store, err := openStore(ctx, g.storeFor(cfg), storeOptions{logger: log, clock: clk, existing: dryRun, pebble: cfg.Pebble})
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, store.Close()) }()
			r, err := newReconciler(ctx, cfg, store, clk, log, nil, nil)
			if err != nil {
				return err
			}
			results, rerr := r.Reconcile(ctx, dryRun)
			if errors.Is(rerr, lifecycle.ErrActionsFailed) || rerr == nil {
				return errors.Join(rerr, writeReports(cmd.OutOrStdout(), format, lifecycle.Reports(results)))
			}
			return rerr
		},
	}
	cmd.Flags().StringVar(&now, "now", "", "plan as of this time (RFC 3339 or Unix ms) instead of now")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the actions and change nothing")
	cmd.Flags().BoolVar(&future, iKnowNowIsInTheFuture, false, "apply a --now later than the clock: creates future tables and dials down today's (test stores and drills only)")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

// iKnowNowIsInTheFuture is the flag with which a test, or a drill on a
// store that takes no writes, applies a --now later than the clock
// (docs/operations.md).
const iKnowNowIsInTheFuture = "i-know-now-is-in-the-future"

// checkNow refuses to apply a --now later than the clock: the cycle would
// create the tables of periods not yet begun and move the table taking
// today's writes down to the warm tier's capacity. A dry run only shows
// that plan; a test that means it passes --i-know-now-is-in-the-future.
func checkNow(now, clock time.Time, dryRun, future bool) error {
	if dryRun || future || !now.After(clock) {
		return nil
	}
	return usageErrorf("--now %s is later than the clock (%s): applying it would create future tables and dial down the tables taking today's writes; add --dry-run to see what will happen",
		now.UTC().Format(time.RFC3339), clock.UTC().Format(time.RFC3339))
}

// newReconciler returns the lifecycle manager of a configuration on a
// store, archiving through package archive.
func newReconciler(ctx context.Context, cfg config.Config, store storage.Store, clk clock.Clock, log *slog.Logger, leaser lifecycle.Leaser, reg prometheus.Registerer) (*lifecycle.Reconciler, error) {
	return lifecycle.New(lifecycle.Options{
		Store:     store,
		Families:  cfg.Families,
		MetaTable: cfg.MetaTable,
		Clock:     clk,
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(ctx, target, store, archive.Options{Clock: clk, Logger: log, Format: format, Method: archive.Method(cfg.ArchiveMethod), Facts: registryOf(cfg, store).Finder(familyNames(cfg))})
		},
		Leaser:     leaser,
		Logger:     log,
		Registerer: reg,
		Compaction: compactionOf(store),
	})
}

// compactionOf returns how tables of a store are compacted: rewritten into
// their next physical table on DynamoDB, where an item deleted costs a
// write unit and a table deleted nothing; in place on Pebble, where a
// delete is a tombstone compacted away.
func compactionOf(store storage.Store) compact.Method {
	if _, ok := store.(*dynamostore.Store); ok {
		return compact.NextGeneration
	}
	return compact.InPlace
}

// registryOf returns the table registry of a configuration's meta table.
func registryOf(cfg config.Config, s storage.Store) *registry.Registry {
	meta := cfg.MetaTable
	if meta == "" {
		meta = engine.DefaultMetaTable
	}
	return registry.New(s, meta)
}

// familyNames returns the names of a configuration's families.
func familyNames(cfg config.Config) []string {
	var names []string
	for _, f := range cfg.Families {
		names = append(names, f.Name)
	}
	return names
}

// writeReports writes a cycle's actions in a format, table or json.
func writeReports(w io.Writer, format string, reports []lifecycle.Report) error {
	if format == "json" {
		if reports == nil {
			reports = []lifecycle.Report{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(reports)
	}
	if len(reports) == 0 {
		_, err := fmt.Fprintln(w, "nothing to do: every table is as the policy says")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tTABLE\tTIER\tRESULT\tREASON")
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Action, r.Table, orDash(r.Tier), r.Result, r.Reason)
	}
	return tw.Flush()
}
