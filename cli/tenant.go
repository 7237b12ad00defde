package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newTenantCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Create and list tenants, the owners of data",
		Args:  noArgs,
	}
	cmd.AddCommand(newTenantAddCmd(g), newTenantListCmd(g))
	return cmd
}

func newTenantAddCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME",
		Short: "Create a tenant and print its API key, once",
		Long: `add creates a tenant and prints its new API key on standard output. Only a
hash of the key is stored: it cannot be shown again. A name is 1 to 63 of
a-z, 0-9, _ and -, starting with a letter or a digit.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn})
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			key, err := s.db.Tenants().Add(ctx, args[0], s.clock.Now())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), key)
			fmt.Fprintf(cmd.ErrOrStderr(), "Created tenant %s. Keep its API key above now: only its hash is stored, so it cannot be shown again.\n", args[0])
			return nil
		},
	}
}

func newTenantListCmd(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list [--format table|json]",
		Short: "List the tenants",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn, existing: true, readOnly: true})
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			ts, err := s.db.Tenants().List(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				type tenantJSON struct {
					Name    string `json:"name"`
					Created string `json:"created"`
				}
				list := make([]tenantJSON, 0, len(ts))
				for _, t := range ts {
					list = append(list, tenantJSON{Name: t.Name, Created: t.Created.UTC().Format(time.RFC3339Nano)})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tCREATED")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Created.UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}
