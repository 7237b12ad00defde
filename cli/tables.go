package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
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
estimate, null (- in a table) when it has none.

Every fact comes from the table registry in the meta table, where each
table's facts are recorded when it is made: state is the registry's
(creating, active, archived, missing; deleted for a table archived and
deleted, whose period is read from its archive, listed with it), shards
the table's own shard count,
and why says why the table has, or is about to get, its tier (the lifecycle
manager moves it there): the schedule, or the backfill tier of a table
made after its period ended. status is what the store says now (- when the
table is gone). A table the store refused to create (the account's table
quota, most often) stays creating, and the listing says why under the
table (create_error in json) until a reconcile makes it.

With --server (or TIMETABLE_SERVER) the tables come from a running server's
admin API, with the admin token in TIMETABLE_ADMIN_TOKEN; the server's
configuration then says which families there are, so a --family it does not
have lists nothing rather than being refused.

The table format ends with a timeline per family: a row per period, a
column per write month, and in each cell the initial of the tier of the
table holding that period's events written in that month (h hot, w warm,
c cold, b backfill; a archived and deleted, read from its archive; . when
there is no such table). A late-data table shows as a mark far right of
its period's row. Under the tables, "archives:" names each archived
table's generation and where its archive is (archive_target and
archived_at in json), deleted tables among them.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			all, err := g.physicalTables(cmd, family)
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
			if err := writeTablesTable(cmd.OutOrStdout(), ts); err != nil {
				return err
			}
			return writeTimeline(cmd.OutOrStdout(), ts)
		},
	}
	cmd.Flags().StringVar(&family, "family", "", "list only the tables of this family")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.AddCommand(newTablesAdoptCmd(g))
	return cmd
}

// physicalTables returns every physical table: from the admin API of the
// server --server names, or from the store, after checking that the
// configuration has family, when it is not "".
func (g *globals) physicalTables(cmd *cobra.Command, family string) (ts []engine.TableStatus, err error) {
	ctx := cmd.Context()
	r, err := g.remote(adminTokenCredential)
	if err != nil {
		return nil, err
	}
	if r != nil {
		return r.tables(ctx)
	}
	s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn, existing: true, readOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if family != "" {
		if err := checkFamily(s.db, family); err != nil {
			return nil, err
		}
	}
	return s.db.Tables(ctx)
}

// checkFamily refuses a family name the configuration does not hold.
func checkFamily(db *engine.DB, name string) error {
	var names []string
	for _, f := range db.Options().Schema.Families {
		if f.Name == name {
			return nil
		}
		names = append(names, f.Name)
	}
	return usageErrorf("--family %q: the configuration has %s", name, joinOr(names))
}

func writeTablesJSON(w io.Writer, ts []engine.TableStatus) error {
	if ts == nil {
		ts = []engine.TableStatus{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ts)
}

func writeTablesTable(w io.Writer, ts []engine.TableStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPHYSICAL\tFAMILY\tPERIOD START\tPERIOD END\tWRITE MONTH\tSTATE\tSHARDS\tTIER\tSTATUS\tBILLING\tREAD\tWRITE\tCLASS\tITEMS\tWHY")
	for _, t := range ts {
		month, items := orDash(t.WriteMonth), "-"
		if t.ItemCount >= 0 {
			items = fmt.Sprint(t.ItemCount)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", t.Name, physicalColumn(t), t.Family,
			t.PeriodStart.UTC().Format(time.RFC3339), t.PeriodEnd.UTC().Format(time.RFC3339),
			month, t.State, t.Shards, orDash(t.Tier), orDash(t.Status), t.Billing, t.ReadCapacity, t.WriteCapacity,
			classColumn(t.Class, len(t.ClassChanges)), items, t.TierReason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range ts {
		if t.CreateError != "" {
			if _, err := fmt.Fprintf(w, "\nnot created: %s\n", t.CreateError); err != nil {
				return err
			}
		}
		if t.RewriteFailed != "" {
			if _, err := fmt.Fprintf(w, "\nrewrite failed: %s: %s\n", t.Name, t.RewriteFailed); err != nil {
				return err
			}
		}
		if t.Drift != "" {
			if _, err := fmt.Fprintf(w, "\ndrift: %s: %s (the lifecycle puts it back)\n", t.Name, t.Drift); err != nil {
				return err
			}
		}
	}
	return writeArchives(w, ts)
}

// writeArchives writes, under the tables, where each archived table's
// archive is: of a table still there, and of one deleted, whose period is
// read from it.
func writeArchives(w io.Writer, ts []engine.TableStatus) error {
	first := true
	for _, t := range ts {
		if t.ArchiveTarget == "" {
			continue
		}
		if first {
			if _, err := fmt.Fprintln(w, "\narchives:"); err != nil {
				return err
			}
			first = false
		}
		when := ""
		if !t.ArchivedAt.IsZero() {
			when = " " + t.ArchivedAt.UTC().Format(time.RFC3339)
		}
		gone := ""
		if t.State == "deleted" {
			gone = ", table deleted: read from the archive"
		}
		if _, err := fmt.Fprintf(w, "  %s generation %d: %s%s%s\n", t.Name, t.Generation, t.ArchiveTarget, when, gone); err != nil {
			return err
		}
	}
	return nil
}

// physicalColumn returns the PHYSICAL column of a table: its physical
// table when a compaction rewrote it into another (Name and ".r1"...),
// "=" when it is the table of its name.
func physicalColumn(t engine.TableStatus) string {
	if t.Physical == "" || t.Physical == t.Name {
		return "="
	}
	return t.Physical
}

// orDash returns s, or "-" for an empty s.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeTimeline writes, per family, a grid of the tables: rows are periods,
// columns write months, marks the initial of each table's tier.
func writeTimeline(w io.Writer, ts []engine.TableStatus) error {
	var families []string
	byFamily := map[string][]engine.TableStatus{}
	for _, t := range ts {
		if _, ok := byFamily[t.Family]; !ok {
			families = append(families, t.Family)
		}
		byFamily[t.Family] = append(byFamily[t.Family], t)
	}
	for _, fam := range families {
		tables := byFamily[fam]
		var periods []time.Time
		var months []string
		mark := map[time.Time]map[string]string{}
		for _, t := range tables {
			p := t.PeriodStart.UTC()
			if _, ok := mark[p]; !ok {
				mark[p] = map[string]string{}
				periods = append(periods, p)
			}
			m := orDash(t.WriteMonth)
			if !slices.Contains(months, m) {
				months = append(months, m)
			}
			initial := "?"
			switch {
			case t.State == "deleted":
				// Archived and deleted: a table of the period, or a
				// generation before it, marks it only when none is there.
				if _, ok := mark[p][m]; ok {
					continue
				}
				initial = "a"
			case t.Tier != "":
				initial = t.Tier[:1]
			}
			mark[p][m] = initial
		}
		slices.SortFunc(periods, func(a, b time.Time) int { return a.Compare(b) })
		slices.Sort(months)
		fmt.Fprintf(w, "\n%s: periods by write month\n", fam)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "PERIOD START")
		for _, m := range months {
			fmt.Fprintf(tw, "\t%s", m)
		}
		fmt.Fprintln(tw)
		for _, p := range periods {
			fmt.Fprint(tw, p.Format(time.RFC3339))
			for _, m := range months {
				c, ok := mark[p][m]
				if !ok {
					c = "."
				}
				fmt.Fprintf(tw, "\t%s", c)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// classColumn names a table class as configuration spells it, with the
// class changes of the last 30 days when there were any: DynamoDB allows
// two.
func classColumn(class string, changes int) string {
	if class == "" {
		return "-"
	}
	s := storage.Class(class).Name()
	if changes > 0 {
		s += fmt.Sprintf(" (%d/%d changes)", changes, family.MaxClassChanges)
	}
	return s
}
