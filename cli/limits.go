package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
	"github.com/timetabledb/timetable/server"
)

// limitFlags are the flags of `timetable tenant limits` that set a limit,
// by the name the admin API and the configuration give it.
var limitFlags = []struct {
	name  string
	usage string
	field func(*api.TenantLimits) any
}{
	{"write_events_per_second", "events a second the tenant may write", func(l *api.TenantLimits) any { return &l.WriteEventsPerSecond }},
	{"write_events_burst", "events the tenant may write at once", func(l *api.TenantLimits) any { return &l.WriteEventsBurst }},
	{"write_bytes_per_second", "request body bytes a second the tenant may write", func(l *api.TenantLimits) any { return &l.WriteBytesPerSecond }},
	{"write_bytes_burst", "request body bytes the tenant may write at once", func(l *api.TenantLimits) any { return &l.WriteBytesBurst }},
	{"max_concurrent_queries", "queries and aggregates the tenant may run at once", func(l *api.TenantLimits) any { return &l.MaxConcurrentQueries }},
	{"max_query_partitions", "partitions the tenant's reads of every series and InfluxQL answers (2 KiB each) may hold at once", func(l *api.TenantLimits) any { return &l.MaxQueryPartitions }},
	{"max_concurrent_writes", "write requests of the tenant a server works on at once", func(l *api.TenantLimits) any { return &l.MaxConcurrentWrites }},
}

func newTenantLimitsCmd(g *globals) *cobra.Command {
	var format string
	var reset bool
	set := map[string]*string{}
	cmd := &cobra.Command{
		Use:   "limits NAME [--FLAG N ...] [--reset] [--format table|json]",
		Short: "Show or set a tenant's limits: write rates, concurrent writes and queries, query partitions",
		Long: `limits shows a tenant's limits: the overrides set for it, and those in force
over the server's defaults (the configuration's limits.tenant). With --server,
the usage of that server is shown too (json). A flag sets that limit; 0 goes
back to the default (--write-events-per-second 5000, --max-concurrent-queries
4, ...); --reset clears every override first. Overrides are
kept with the tenant in the meta table, and every server applies them
within ten seconds.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			changed := reset
			for _, f := range limitFlags {
				changed = changed || cmd.Flags().Changed(flagName(f.name))
			}
			return g.withTenants(cmd, !changed, func(ctx context.Context, ta tenantAdmin) error {
				l, err := ta.limits(ctx, args[0])
				if err != nil {
					return err
				}
				if changed {
					over := l.Overrides
					if reset {
						over = api.TenantLimits{}
					}
					for _, f := range limitFlags {
						if !cmd.Flags().Changed(flagName(f.name)) {
							continue
						}
						if err := parseLimit(f.field(&over), *set[f.name]); err != nil {
							return usageErrorf("--%s: %v", flagName(f.name), err)
						}
					}
					if l, err = ta.setLimits(ctx, args[0], over); err != nil {
						return err
					}
				}
				return writeLimits(cmd, format, l)
			})
		},
	}
	for _, f := range limitFlags {
		set[f.name] = cmd.Flags().String(flagName(f.name), "", f.usage+" (0: the default)")
	}
	cmd.Flags().BoolVar(&reset, "reset", false, "clear every override first: the defaults hold")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

// flagName is the flag of a limit: its name with dashes.
func flagName(limit string) string { return strings.ReplaceAll(limit, "_", "-") }

// parseLimit parses a limit's value into its field.
func parseLimit(field any, s string) error {
	switch p := field.(type) {
	case *float64:
		v, err := strconv.ParseFloat(s, 64)
		*p = v
		return err
	case *int:
		v, err := strconv.Atoi(s)
		*p = v
		return err
	}
	return fmt.Errorf("no such limit")
}

// writeLimits prints a tenant's limits.
func writeLimits(cmd *cobra.Command, format string, l api.Limits) error {
	if format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT\tOVERRIDE\tIN FORCE")
	for _, f := range limitFlags {
		over, eff := l.Overrides, l.Effective
		o := fmt.Sprint(reflectValue(f.field(&over)))
		if o == "0" {
			o = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\n", f.name, o, reflectValue(f.field(&eff)))
	}
	return tw.Flush()
}

// reflectValue returns the value a limit's field points to.
func reflectValue(field any) any {
	switch p := field.(type) {
	case *float64:
		return strconv.FormatFloat(*p, 'f', -1, 64)
	case *int:
		return *p
	}
	return nil
}

// limits reads a tenant's overrides from the store; in force are the
// overrides over the configuration's defaults. Usage is a server's, and
// so absent.
func (l localTenants) limits(ctx context.Context, name string) (api.Limits, error) {
	over, err := l.reg.Limits(ctx, name)
	if err != nil {
		return api.Limits{}, err
	}
	return api.Limits{Overrides: over, Effective: over.Or(l.defaults), MetricsLabel: server.MetricsLabel(name)}, nil
}

func (l localTenants) setLimits(ctx context.Context, name string, over api.TenantLimits) (api.Limits, error) {
	if err := l.reg.SetLimits(ctx, name, over); err != nil {
		return api.Limits{}, err
	}
	return l.limits(ctx, name)
}

func (r *remote) limits(ctx context.Context, name string) (api.Limits, error) {
	return call(r, func(c *client.Client) (api.Limits, error) { return c.TenantLimits(ctx, name) })
}

func (r *remote) setLimits(ctx context.Context, name string, over api.TenantLimits) (api.Limits, error) {
	return call(r, func(c *client.Client) (api.Limits, error) { return c.SetTenantLimits(ctx, name, over) })
}
