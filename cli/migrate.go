package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/migrate"
)

// migrateFlags are the flags of migrate.
type migrateFlags struct {
	from, to   string
	writeUnits int
	pageItems  int
}

func newMigrateCmd(g *globals) *cobra.Command {
	var f migrateFlags
	cmd := &cobra.Command{
		Use:   "migrate --from STORE --to STORE [--write-units N]",
		Short: "Copy a whole store into another: Pebble to DynamoDB, DynamoDB to Pebble",
		Long: `migrate copies everything a store holds into another, named as --store
names them (pebble:DIR, dynamodb): every physical table the registry names
with all its items (each event keeps its id, period, write month and
table), and the meta table: the registry, the logical tables, the tenants
with their limits and scopes, and their API keys, which go on working.
--config is the configuration of the target's server: its meta_table is
the one copied, its families those the target's server will know.

It copies a page of items at a time, saves a checkpoint in the target's
meta table after each, and goes on from there when run again after a kill;
a migration run twice copies nothing twice. --write-units bounds the write
capacity units a second it spends on DynamoDB. Each table is verified once
copied: both sides scanned, their content hashes (the archives' hash)
compared. The target must hold no other timetable.

The source must not be written to meanwhile: stop its server first
(docs/migrate.md gives the cut-over of a running server).`,
		Args: noArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.refuseServer(cmd, "it opens both stores itself")
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMigrate(cmd, g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.from, "from", "", "the store to copy: pebble:DIR or dynamodb")
	fl.StringVar(&f.to, "to", "", "the store to copy into: pebble:DIR or dynamodb")
	fl.IntVar(&f.writeUnits, "write-units", 0, "the most write capacity units a second to spend on the target (0: no limit)")
	fl.IntVar(&f.pageItems, "page-items", migrate.DefaultPageItems, "the most items read and written at a time, and between two checkpoints")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func runMigrate(cmd *cobra.Command, g *globals, f migrateFlags) (err error) {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	if f.from == f.to {
		if f.from == "dynamodb" {
			return usageErrorf("--from and --to are both dynamodb, the one endpoint and account AWS's configuration names: there is nothing to copy")
		}
		return usageErrorf("--from and --to are both %s: there is nothing to copy", f.from)
	}
	if f.writeUnits < 0 {
		return usageErrorf("--write-units %d: use 0 for no limit, or a count of units a second", f.writeUnits)
	}
	if f.pageItems < 1 {
		return usageErrorf("--page-items %d: use a count of items, at least 1", f.pageItems)
	}
	for _, s := range []string{f.from, f.to} {
		if s != "dynamodb" && !strings.HasPrefix(s, "pebble:") || s == "pebble:" {
			return usageErrorf("store %q: use pebble:DIR or dynamodb", s)
		}
	}
	log, err := g.logger(stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	clk, err := g.clock()
	if err != nil {
		return err
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	from, err := openStore(ctx, f.from, storeOptions{logger: log, clock: clk, existing: true, pebble: cfg.Pebble})
	if err != nil {
		return fmt.Errorf("open the source %s: %w", f.from, err)
	}
	defer func() { err = errors.Join(err, from.Close()) }()
	to, err := openStore(ctx, f.to, storeOptions{logger: log, clock: clk, pebble: cfg.Pebble})
	if err != nil {
		return fmt.Errorf("open the target %s: %w", f.to, err)
	}
	defer func() { err = errors.Join(err, to.Close()) }()

	meta := cfg.MetaTable
	if meta == "" {
		meta = engine.DefaultMetaTable
	}
	var families []string
	for _, fam := range cfg.Families {
		families = append(families, fam.Name)
	}
	var bar *progressbar.ProgressBar
	m, err := migrate.New(from, to, migrate.Options{
		MetaTable: meta, Families: families, Source: sourceName(f.from), WriteUnits: f.writeUnits, PageItems: f.pageItems, Logger: log,
		Progress: func(n int) {
			if bar != nil {
				_ = bar.Add(n)
			}
		},
	})
	if err != nil {
		return usageError{err}
	}
	plan, err := m.Plan(ctx)
	if err != nil {
		return err
	}
	if len(plan.Unknown) > 0 {
		fmt.Fprintf(stderr, "warning: the configuration has no family %s, which the registry has: its tables are copied, and read by their registry entries; add the families to the target's --config to make new tables of them\n",
			strings.Join(plan.Unknown, ", "))
	}
	if len(plan.Gone) > 0 {
		slices.Sort(plan.Gone)
		fmt.Fprintf(stderr, "warning: the registry names tables the source does not have, not copied: %s\n", strings.Join(plan.Gone, ", "))
	}
	// The stores' counts are estimates (DynamoDB's are up to six hours
	// old): none at all shows a spinner with the count and rate.
	total := plan.Items
	if total <= 0 {
		total = -1
	}
	bar = newItemProgress(stderr, total, "migrating")
	r, err := m.Run(ctx, plan)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	var copied int64
	for _, t := range r.Tables {
		fmt.Fprintf(out, "%s\t%d items\t%s\n", t.Name, t.Items, t.Hash)
		copied += t.Copied
	}
	fmt.Fprintf(out, "migrated %d tables, %d items (%d written now) from %s to %s, every table verified\n",
		len(r.Tables), r.Items(), copied, f.from, f.to)
	return nil
}

// sourceName is the name a migration records of its source: a Pebble
// directory by its absolute path, so that the same migration run again
// from another directory is known as the same.
func sourceName(spec string) string {
	if dir, ok := strings.CutPrefix(spec, "pebble:"); ok {
		if abs, err := filepath.Abs(dir); err == nil {
			return "pebble:" + abs
		}
	}
	return spec
}
