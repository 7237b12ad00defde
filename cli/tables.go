package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/engine"
)

func newTablesCmd(g *globals) *cobra.Command {
	var family, format string
	cmd := &cobra.Command{
		Use:   "tables [--family F] [--format table|json]",
		Short: "List the physical tables: periods, write month, tier, status, capacity",
		Long: `tables lists the physical tables of every family (or of --family), in
family and then period order. A period is half-open: period_end is the next
period's start. write_month is the month the table's events arrived in, with
write-time grouping (null in json without it). item_count is the store's
estimate, null (- in a table) when it has none.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn, existing: true})
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, s.Close()) }()
			if family != "" {
				if err := checkFamily(s.db, family); err != nil {
					return err
				}
			}
			all, err := s.db.Tables(ctx)
			if err != nil {
				return err
			}
			var ts []engine.TableStatus
			for _, t := range all {
				if family == "" || t.Family == family {
					ts = append(ts, t)
				}
			}
			if format == "json" {
				return writeTablesJSON(cmd.OutOrStdout(), ts)
			}
			return writeTablesTable(cmd.OutOrStdout(), ts)
		},
	}
	cmd.Flags().StringVar(&family, "family", "", "list only the tables of this family")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

// checkFamily refuses a family name the configuration does not hold.
func checkFamily(db *engine.DB, name string) error {
	var names []string
	for _, f := range db.Options().Config.Families {
		if f.Name == name {
			return nil
		}
		names = append(names, f.Name)
	}
	return usageErrorf("--family %q: the configuration has %s", name, joinOr(names))
}

// tableJSON is a physical table as tables --format json writes it.
type tableJSON struct {
	Name          string  `json:"name"`
	Family        string  `json:"family"`
	PeriodStart   string  `json:"period_start"`
	PeriodEnd     string  `json:"period_end"`
	WriteMonth    *string `json:"write_month"`
	Tier          string  `json:"tier"`
	Status        string  `json:"status"`
	Billing       string  `json:"billing"`
	ReadCapacity  int64   `json:"read_capacity"`
	WriteCapacity int64   `json:"write_capacity"`
	ItemCount     *int64  `json:"item_count"`
}

func writeTablesJSON(w io.Writer, ts []engine.TableStatus) error {
	out := make([]tableJSON, 0, len(ts))
	for _, t := range ts {
		j := tableJSON{
			Name:          t.Name,
			Family:        t.Family,
			PeriodStart:   t.PeriodStart.UTC().Format(time.RFC3339),
			PeriodEnd:     t.PeriodEnd.UTC().Format(time.RFC3339),
			Tier:          t.Tier,
			Status:        t.Status,
			Billing:       t.Billing,
			ReadCapacity:  t.ReadCapacity,
			WriteCapacity: t.WriteCapacity,
		}
		if t.WriteMonth != "" {
			j.WriteMonth = &t.WriteMonth
		}
		if t.ItemCount >= 0 {
			j.ItemCount = &t.ItemCount
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeTablesTable(w io.Writer, ts []engine.TableStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFAMILY\tPERIOD START\tPERIOD END\tWRITE MONTH\tTIER\tSTATUS\tBILLING\tREAD\tWRITE\tITEMS")
	for _, t := range ts {
		month, items := orDash(t.WriteMonth), "-"
		if t.ItemCount >= 0 {
			items = fmt.Sprint(t.ItemCount)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", t.Name, t.Family,
			t.PeriodStart.UTC().Format(time.RFC3339), t.PeriodEnd.UTC().Format(time.RFC3339),
			month, orDash(t.Tier), t.Status, t.Billing, t.ReadCapacity, t.WriteCapacity, items)
	}
	return tw.Flush()
}

// orDash returns s, or "-" for an empty s.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
