package cli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/registry"
)

// newTablesAdoptCmd returns `timetable tables adopt NAME...`: the
// operator's word that tables found without a registry entry are this
// deployment's.
func newTablesAdoptCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "adopt NAME... [--force]",
		Short: "Register tables found without a registry entry as this deployment's",
		Long: `adopt registers each named table in this deployment's table registry and
tags it with the deployment's meta table (timetable:meta), so the lifecycle
manager moves it through its tiers, archives and deletes it like the tables
it made.

The lifecycle manager adopts a table by itself only when the table's tags
name this deployment's meta table: a table whose registry entry was lost.
Tables made by hand, by a version of timetable before the tag, or by
another deployment on the same endpoint are left alone until an operator
adopts them here. A table tagged with another deployment's meta table is
refused unless --force: two deployments must not manage one table. The
name must parse as a table of a configured family.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) (err error) {
			ctx := cmd.Context()
			clk, err := g.clock()
			if err != nil {
				return err
			}
			log, err := g.logger(cmd.ErrOrStderr(), slog.LevelWarn)
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			store, err := openStore(ctx, g.storeFor(cfg), storeOptions{logger: log, clock: clk, existing: true})
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, store.Close()) }()
			reg := registryOf(cfg, store)
			for _, name := range names {
				e, err := reg.Adopt(ctx, store, cfg.Families, name, force, clk.Now())
				if errors.Is(err, registry.ErrNotAdoptable) {
					return usageErrorf("%v", err)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "adopted %s into family %q (%s, generation %d)\n", e.Name, e.Policy.Name, e.Source, e.Generation)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "adopt a table tagged with another deployment's meta table")
	return cmd
}
