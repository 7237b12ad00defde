package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
)

// archiveFlags are the flags of the archive subcommands.
type archiveFlags struct {
	target    string
	pathStyle bool
	table     string
	into      string
	format    string
	// archiveFormat is export's --archive-format.
	archiveFormat string
	// keep is restore's --keep: how long a restored table is kept.
	keep time.Duration
}

func newArchiveCmd(g *globals) *cobra.Command {
	var f archiveFlags
	cmd := &cobra.Command{
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.refuseServer(cmd, "it reads and writes the store and the archives itself")
		},
		Use:   "archive",
		Short: "Export tables to a folder or S3, list and verify the archives, restore one",
		Long: `archive exports physical tables as gzip-compressed NDJSON in DynamoDB JSON
(the format of DynamoDB's export to S3) with a manifest, reads each export
back to verify it, lists archives and restores them.

The target is --target: file:///abs/dir, file://relative/dir, or
s3://bucket/prefix through the standard AWS configuration chain
(AWS_ENDPOINT_URL_S3 for an S3-compatible server, with --s3-path-style).
Without --target, a table's target is the archive target of the family its
name belongs to, in the configuration. Export writes in the format that
family's archive names (--archive-format overrides it): ndjson, or parquet,
which writes the table's events as a Parquet file beside the NDJSON, under
{target}/{family}/period=.../write_month=.../ for query engines.`,
		Args: noArgs,
		RunE: showHelp,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.target, "target", "", "archive target URL (default: the family's archive target)")
	pf.BoolVar(&f.pathStyle, "s3-path-style", false, "address S3 buckets by path, as most S3-compatible servers want")

	list := &cobra.Command{
		Use:   "list [--target URL] [--format table|json]",
		Short: "List the archives in a target",
		Long: `list prints the manifest of every archive in the target (or in the archive
target of every family, without --target), in table-name order: period,
write month, item count, size, the rows of its Parquet file (format
parquet), when it was made, and whether it was read back and verified. An export that never finished has no manifest and is not
listed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runArchiveList(cmd, g, f)
		},
	}
	list.Flags().StringVar(&f.format, "format", "table", "output format: table or json")

	export := &cobra.Command{
		Use:   "export --table T [--target URL]",
		Short: "Export a physical table, read it back and verify it",
		Long: `export writes a physical table's items and manifest to the target, reads
them back, checks the item count and checksums against the manifest and a
fresh scan of the table, and marks the manifest verified. It replaces any
earlier archive of the table, and deletes nothing: the lifecycle manager
deletes a table past retention once its archive is verified.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runArchiveExport(cmd, g, f)
		},
	}
	export.Flags().StringVar(&f.table, "table", "", "physical table to export, as timetable tables lists them")
	export.Flags().StringVar(&f.archiveFormat, "archive-format", "", "ndjson, or parquet: also the events as Parquet (default: the family's archive format)")
	_ = export.MarkFlagRequired("table")

	restore := &cobra.Command{
		Use:   "restore --table T [--into NAME] [--keep DURATION] [--target URL]",
		Short: "Restore an archived table, so that queries see its events again",
		Long: `restore checks the archive of table T against its manifest, creates the
table --into (T by default) with the archived table's tags and on-demand
billing (bounded by the family's backfill max_read/max_write, when it sets
them), and writes the items back without their TTL attribute. Queries
see the events again. Items replace those of the same key, so an
interrupted restore can be run again. A restore never merges into a live
table: when the registry has the table --into creating, active or
archived and the store still has it, restore refuses, naming it; restore
--into a new name beside it instead.

A table restored under its own name is registered as restored until
--keep from now (7 days by default): the lifecycle manager leaves it
alone until then and deletes it again after (its archive stays verified).
Restore again, or with a longer --keep, to keep it longer. A table
restored --into another name is not registered.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runArchiveRestore(cmd, g, f)
		},
	}
	restore.Flags().StringVar(&f.table, "table", "", "archived physical table")
	restore.Flags().StringVar(&f.into, "into", "", "name of the table to restore into (default: --table)")
	restore.Flags().DurationVar(&f.keep, "keep", DefaultRestoreKeep, "how long the lifecycle keeps a table restored under its own name")
	_ = restore.MarkFlagRequired("table")

	verify := &cobra.Command{
		Use:   "verify --table T [--target URL]",
		Short: "Check an archive against its manifest and the table",
		Long: `verify reads the archive of table T back from the target and checks the
data's size, SHA-256, item count and content hash, and each Parquet file's
size, SHA-256 and rows, against the manifest and, while the table exists,
against a fresh scan of it: a full read of the table, which export does not
do. It exits non-zero when they differ or there is no archive, and changes
nothing.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runArchiveVerify(cmd, g, f)
		},
	}
	verify.Flags().StringVar(&f.table, "table", "", "archived physical table")
	_ = verify.MarkFlagRequired("table")

	cmd.AddCommand(list, export, verify, restore)
	return cmd
}

// targetFor returns --target, or the archive target of the family whose
// prefix the table's name starts with (the longest one), and
// --archive-format, or that family's archive format.
func targetFor(cfg config.Config, f archiveFlags, table string) (string, family.ArchiveFormat, error) {
	fam := familyOfTable(cfg, table)
	target, format := cmp.Or(f.target, fam.Archive), cmp.Or(family.ArchiveFormat(f.archiveFormat), fam.ArchiveFormat)
	if target == "" {
		return "", "", usageErrorf("no --target, and the configuration gives table %q no family with an archive target", table)
	}
	switch family.ArchiveFormat(f.archiveFormat) {
	case "", family.ArchiveNDJSON, family.ArchiveParquet:
	default:
		return "", "", usageErrorf("--archive-format %q: use ndjson or parquet", f.archiveFormat)
	}
	return target, format, nil
}

// familyOfTable returns the family whose prefix the table's name starts
// with (the longest one), the zero Family when none does.
func familyOfTable(cfg config.Config, table string) family.Family {
	var fam family.Family
	for _, c := range cfg.Families {
		if strings.HasPrefix(table, c.Prefix) && len(c.Prefix) > len(fam.Prefix) {
			fam = c
		}
	}
	return fam
}

// archiveOptions returns the options of an archiver for a session (nil
// to only list) that moves *bar, when there is one, as items go.
func archiveOptions(f archiveFlags, s *session, bar **progressbar.ProgressBar) archive.Options {
	o := archive.Options{S3: archive.S3Options{UsePathStyle: f.pathStyle}}
	if s != nil {
		o.Logger, o.Clock = s.log, s.clock
		o.Facts = registryOf(s.cfg, s.store).Finder(familyNames(s.cfg))
		o.Method = archive.Method(s.cfg.ArchiveMethod)
	}
	if bar != nil {
		o.Progress = func(n int) {
			if *bar != nil {
				_ = (*bar).Add(n)
			}
		}
	}
	return o
}

func runArchiveList(cmd *cobra.Command, g *globals, f archiveFlags) error {
	if err := checkFormat(f.format, "table", "json"); err != nil {
		return err
	}
	ctx := cmd.Context()
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	targets := []string{f.target}
	if f.target == "" {
		targets = nil
		for _, fam := range cfg.Families {
			if fam.Archive != "" && !slices.Contains(targets, fam.Archive) {
				targets = append(targets, fam.Archive)
			}
		}
		if len(targets) == 0 {
			return usageErrorf("no --target, and no family in the configuration has an archive target")
		}
	}
	var all []listedManifest
	for _, t := range targets {
		// Listing reads only the target: no store is opened.
		a, err := archive.Open(ctx, t, nil, archiveOptions(f, nil, nil))
		if err != nil {
			return usageError{err}
		}
		ms, err := a.List(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			all = append(all, listedManifest{Target: a.Target(), Manifest: m})
		}
	}
	if f.format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if all == nil {
			all = []listedManifest{}
		}
		return enc.Encode(all)
	}
	return writeArchivesTable(cmd.OutOrStdout(), all)
}

// listedManifest is an archive as list --format json writes it: its
// target and its manifest's fields.
type listedManifest struct {
	Target string `json:"target"`
	archive.Manifest
}

func writeArchivesTable(w io.Writer, ms []listedManifest) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tFAMILY\tPERIOD START\tWRITE MONTH\tITEMS\tBYTES\tPARQUET ROWS\tCREATED\tVERIFIED\tTARGET")
	for _, l := range ms {
		m := l.Manifest
		verified := "no"
		if m.VerifiedAt != nil {
			verified = m.VerifiedAt.UTC().Format(time.RFC3339)
		}
		parquet := "-" // an archive in NDJSON alone
		if len(m.Parquet) > 0 {
			var rows int64
			for _, p := range m.Parquet {
				rows += p.Rows
			}
			parquet = strconv.FormatInt(rows, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", m.Table, orDash(m.Family), orDash(m.PeriodStart),
			orDash(m.WriteMonth), m.ItemCount, m.DataBytes, parquet, m.CreatedAt.UTC().Format(time.RFC3339), verified, l.Target)
	}
	return tw.Flush()
}

func runArchiveExport(cmd *cobra.Command, g *globals, f archiveFlags) (err error) {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	s, err := g.openSession(ctx, stderr, sessionOptions{logLevel: slog.LevelWarn, existing: true, readOnly: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	target, format, err := targetFor(s.cfg, f, f.table)
	if err != nil {
		return err
	}
	// The store's item count is an estimate (DynamoDB updates it every
	// six hours or so): the bar counts items without a total.
	bar := newItemProgress(stderr, -1, "exporting")
	opts := archiveOptions(f, s, &bar)
	opts.Format = format
	a, err := archive.Open(ctx, target, s.store, opts)
	if err != nil {
		return usageError{err}
	}
	err = a.Archive(ctx, f.table)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	m, err := a.Manifest(ctx, f.table)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "archived %s to %s/%s: %d items, %d bytes, verified\n",
		f.table, a.Target(), f.table, m.ItemCount, m.DataBytes)
	for _, p := range m.Parquet {
		fmt.Fprintf(cmd.OutOrStdout(), "events of %s in %s/%s: %d rows, %d bytes, verified\n", f.table, a.Target(), p.Key, p.Rows, p.Bytes)
	}
	return nil
}

func runArchiveVerify(cmd *cobra.Command, g *globals, f archiveFlags) (err error) {
	ctx := cmd.Context()
	s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn, existing: true, readOnly: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	target, _, err := targetFor(s.cfg, f, f.table)
	if err != nil {
		return err
	}
	a, err := archive.Open(ctx, target, s.store, archiveOptions(f, s, nil))
	if err != nil {
		return usageError{err}
	}
	if err := a.Verify(ctx, f.table); err != nil {
		return err
	}
	m, err := a.Manifest(ctx, f.table)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "verified %s in %s/%s: %d items, %d bytes\n",
		f.table, a.Target(), f.table, m.ItemCount, m.DataBytes)
	return nil
}

func runArchiveRestore(cmd *cobra.Command, g *globals, f archiveFlags) (err error) {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	s, err := g.openSession(ctx, stderr, sessionOptions{logLevel: slog.LevelWarn})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	target, _, err := targetFor(s.cfg, f, f.table)
	if err != nil {
		return err
	}
	var bar *progressbar.ProgressBar
	o := archiveOptions(f, s, &bar)
	o.RestoreCapacity = familyOfTable(s.cfg, f.table).RestoreCapacity()
	a, err := archive.Open(ctx, target, s.store, o)
	if err != nil {
		return usageError{err}
	}
	m, err := a.Manifest(ctx, f.table)
	if err != nil {
		return err
	}
	bar = newItemProgress(stderr, m.ItemCount, "restoring")
	err = a.Restore(ctx, f.table, f.into)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	into := f.into
	if into == "" || into == f.table {
		cfg := s.cfg
		reg := registryOf(cfg, s.store)
		e, found, err := reg.Find(ctx, familyNames(cfg), f.table)
		if err != nil {
			return err
		}
		if found {
			now := s.clock.Now()
			if _, err := reg.MarkRestored(ctx, e, f.table, o.RestoreCapacity, now.Add(f.keep), now); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %d items of %s from %s, kept until %s\n", m.ItemCount, f.table, a.Target(),
				now.Add(f.keep).UTC().Format(time.RFC3339))
			return nil
		}
		into = f.table
	}
	fmt.Fprintf(cmd.OutOrStdout(), "restored %d items of %s from %s into %s\n", m.ItemCount, f.table, a.Target(), into)
	return nil
}

// DefaultRestoreKeep is how long a table restored under its own name is
// kept when `archive restore --keep` is not given.
const DefaultRestoreKeep = 7 * 24 * time.Hour

// newItemProgress returns a progress bar of n items (a spinner when n is
// unknown, -1), with their count and rate, on w when it is a terminal, and
// nil otherwise.
func newItemProgress(w io.Writer, n int64, what string) *progressbar.ProgressBar {
	if !isTerminal(w) {
		return nil
	}
	if n < 0 {
		n = -1
	}
	return progressbar.NewOptions64(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
}
