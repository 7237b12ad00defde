package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// TestArchiveExportRestore archives every table of a seeded store, deletes
// them behind timetable's back, restores them, and queries the same events.
func TestArchiveExportRestore(t *testing.T) {
	store, _ := seeded(t)
	target := "--target=file://" + filepath.ToSlash(t.TempDir())
	query := []string{"query", store, "--tenant", "acme", "--table", "a_table",
		"--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "json"}
	before := mustRun(t, "", query...).stdout

	var tables []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &tables))
	require.NotEmpty(t, tables)
	for _, tb := range tables {
		r := mustRun(t, "", "archive", "export", store, target, "--table", tb.Name)
		require.Contains(t, r.stdout, "archived "+tb.Name)
		require.Contains(t, r.stdout, "verified")
		r = mustRun(t, "", "archive", "verify", store, target, "--table", tb.Name)
		require.Contains(t, r.stdout, "verified "+tb.Name)
	}

	var listed []struct {
		Table      string  `json:"table"`
		ItemCount  int64   `json:"item_count"`
		VerifiedAt *string `json:"verified_at"`
		Target     string  `json:"target"`
	}
	r := mustRun(t, "", "archive", "list", target, "--format", "json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	require.Len(t, listed, len(tables))
	for i, l := range listed {
		require.Equal(t, tables[i].Name, l.Table)
		require.NotNil(t, l.VerifiedAt)
		require.Positive(t, l.ItemCount)
	}
	r = mustRun(t, "", "archive", "list", target)
	require.Contains(t, r.stdout, "VERIFIED")
	require.Contains(t, r.stdout, tables[0].Name)
	require.Contains(t, r.stdout, testNow)

	// Delete the tables, as the lifecycle manager would.
	dir := strings.TrimPrefix(store, "--store=pebble:")
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	for _, tb := range tables {
		require.NoError(t, s.DeleteTable(context.Background(), tb.Name))
	}
	require.NoError(t, s.Close())
	require.Equal(t, "[]\n", mustRun(t, "", query...).stdout)

	for _, tb := range tables {
		r := mustRun(t, "", "archive", "restore", store, target, "--table", tb.Name, "--keep", "48h")
		require.Contains(t, r.stdout, "restored")
		require.Contains(t, r.stdout, "kept until")
	}
	require.Equal(t, before, mustRun(t, "", query...).stdout)

	// The restored tables are registered as restored, until --keep ends.
	var restored []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &restored))
	require.Len(t, restored, len(tables))
	for _, tb := range restored {
		require.Equal(t, "restored", tb.State, tb.Name)
		require.Contains(t, tb.TierReason, "kept until")
	}
}

// TestArchiveFamilyTarget takes the target from the family's archive key
// when --target is not given.
func TestArchiveFamilyTarget(t *testing.T) {
	store, _ := seeded(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("families:\n  - name: events\n    retention: 2160h\n    archive: file://"+filepath.ToSlash(dir)+"\n"), 0o644))

	var tables []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &tables))
	mustRun(t, "", "archive", "export", store, "--config", cfg, "--table", tables[0].Name)
	_, err := os.Stat(filepath.Join(dir, tables[0].Name, "manifest.json"))
	require.NoError(t, err)
	r := mustRun(t, "", "archive", "list", "--config", cfg)
	require.Contains(t, r.stdout, tables[0].Name)

	// The table is live: a restore into it is refused, and says how to
	// restore beside it.
	r = run(t, "", "archive", "restore", store, "--config", cfg, "--table", tables[0].Name)
	require.ErrorIs(t, r.err, archive.ErrLiveTable)
	require.ErrorContains(t, r.err, tables[0].Name+`" is active`)
	require.ErrorContains(t, r.err, "--into NEWNAME")
	r = mustRun(t, "", "archive", "restore", store, "--config", cfg, "--table", tables[0].Name, "--into", "tt_beside")
	require.Contains(t, r.stdout, "into tt_beside")
}

// TestRestoreCarriesOnDemandMaximum restores a table with the family's
// backfill maximum: a restore's burst of writes is bounded as a
// backfill's is, and the registry records what was applied.
func TestRestoreCarriesOnDemandMaximum(t *testing.T) {
	store, _ := seeded(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("families:\n  - name: events\n    retention: 2160h\n    archive: file://"+filepath.ToSlash(dir)+
		"\n    backfill: {billing: on_demand, max_read: 200, max_write: 500}\n"), 0o644))

	var tables []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &tables))
	name := tables[0].Name
	mustRun(t, "", "archive", "export", store, "--config", cfg, "--table", name)
	data := strings.TrimPrefix(store, "--store=pebble:")
	s, err := pebblestore.Open(data, pebblestore.Options{})
	require.NoError(t, err)
	require.NoError(t, s.DeleteTable(context.Background(), name))
	require.NoError(t, s.Close())

	mustRun(t, "", "archive", "restore", store, "--config", cfg, "--table", name)
	s, err = pebblestore.Open(data, pebblestore.Options{})
	require.NoError(t, err)
	info, err := s.DescribeTable(context.Background(), name)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Equal(t, storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard, MaxRead: 200, MaxWrite: 500}, info.Capacity)
	out := mustRun(t, "", "tables", store, "--config", cfg).stdout
	require.NotContains(t, out, "drift:", "the registry records the capacity applied")
}

// TestArchiveParquet exports in the family's format, parquet, and with
// --archive-format: the Parquet file is listed and where it says.
func TestArchiveParquet(t *testing.T) {
	store, _ := seeded(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("families:\n  - name: events\n    retention: 2160h\n    archive: {target: file://"+filepath.ToSlash(dir)+", format: parquet}\n"), 0o644))

	var tables []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &tables))
	r := mustRun(t, "", "archive", "export", store, "--config", cfg, "--table", tables[0].Name)
	require.Contains(t, r.stdout, "events of "+tables[0].Name+" in file://")
	files, err := filepath.Glob(filepath.Join(dir, "events", "period=*", "write_month=*", tables[0].Name+"-g1-s0-0.parquet"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	r = mustRun(t, "", "archive", "list", "--config", cfg)
	require.Contains(t, r.stdout, "PARQUET ROWS")

	// --archive-format with --target, where no family archives.
	other := t.TempDir()
	r = mustRun(t, "", "archive", "export", store, "--target", "file://"+filepath.ToSlash(other), "--archive-format", "parquet", "--table", tables[1].Name)
	require.Contains(t, r.stdout, "events of "+tables[1].Name)
}

func TestArchiveUsage(t *testing.T) {
	store, _ := seeded(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no target", []string{"archive", "export", store, "--table", "tt_events_1"}},
		{"no target to list", []string{"archive", "list"}},
		{"bad format", []string{"archive", "list", "--target", "file:///tmp", "--format", "xml"}},
		{"bad target", []string{"archive", "list", "--target", "ftp://host/dir"}},
		{"no table", []string{"archive", "restore", store, "--target", "file:///tmp"}},
		{"bad archive format", []string{"archive", "export", store, "--target", "file:///tmp", "--table", "tt_events_1", "--archive-format", "csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			require.Error(t, r.err)
			require.Equal(t, ExitUsage, ExitCode(r.err), "a usage error: %v", r.err)
		})
	}
	// An archive that is not there is an error, not a usage error.
	for _, sub := range []string{"restore", "verify"} {
		r := run(t, "", "archive", sub, store, "--target", "file://"+t.TempDir(), "--table", "tt_events_none")
		require.Error(t, r.err, sub)
		require.ErrorIs(t, r.err, archive.ErrNotFound, sub)
		require.Equal(t, ExitFailure, ExitCode(r.err), sub)
	}
}

// TestUnknownSubcommand: a subcommand a command does not have is a usage
// error that names it and the subcommands it is close to, not the
// command's help and exit status 0.
func TestUnknownSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"archive", "verfy"}, `unknown command "verfy" for "timetable archive": did you mean verify?`},
		{[]string{"tenant", "ad"}, `unknown command "ad" for "timetable tenant": did you mean add or add-key?`},
		{[]string{"tables", "adpot"}, `unknown command "adpot" for "timetable tables": did you mean adopt?`},
		{[]string{"archive", "zzz"}, `unknown command "zzz" for "timetable archive": its commands are export, list, restore or verify`},
		{[]string{"qeury"}, `unknown command "qeury" for "timetable"`},
	} {
		r := run(t, "", tc.args...)
		require.Error(t, r.err, tc.args)
		require.Contains(t, r.err.Error(), tc.want)
		require.Equal(t, ExitUsage, ExitCode(r.err), tc.args)
	}
	// Alone, a command that groups others prints its help.
	r := run(t, "", "archive")
	require.NoError(t, r.err)
	require.Contains(t, r.stdout, "verify")
}

// TestTablesListsArchivedAndDeleted lets the lifecycle archive and delete
// the seeded tables: `timetable tables` still lists them, state deleted,
// with their archive's location, and the queries read them from it.
func TestTablesListsArchivedAndDeleted(t *testing.T) {
	store, _ := seeded(t)
	dir := t.TempDir()
	target := "file://" + filepath.ToSlash(dir)
	cfg := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("families:\n  - name: events\n    retention: 720h\n    archive: "+target+"\n"), 0o644))
	var before []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--config", cfg, "--format", "json").stdout), &before))
	require.NotEmpty(t, before)
	query := mustRun(t, "", "query", store, "--config", cfg, "--tenant", "acme", "--table", "a_table",
		"--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "json").stdout

	// Months on (the first cycle fences, a later one archives and deletes
	// once the fence settled).
	for _, now := range []string{"2017-09-01T00:00:00Z", "2017-09-01T06:00:00Z", "2017-09-01T12:00:00Z"} {
		mustRun(t, "", "reconcile", store, "--config", cfg, "--now", now, "--"+iKnowNowIsInTheFuture)
	}
	var after []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--config", cfg, "--format", "json").stdout), &after))
	deleted := map[string]engine.TableStatus{}
	for _, tb := range after {
		if tb.State == "deleted" {
			deleted[tb.Name] = tb
		}
	}
	for _, tb := range before {
		d, ok := deleted[tb.Name]
		require.True(t, ok, "%s is listed once archived and deleted: %+v", tb.Name, after)
		require.Equal(t, target, d.ArchiveTarget)
		require.False(t, d.ArchivedAt.IsZero())
		require.Empty(t, d.Status, "gone from the store")
		require.Equal(t, int64(-1), d.ItemCount)
		require.Contains(t, d.TierReason, "read from its archive")
	}
	out := mustRun(t, "", "tables", store, "--config", cfg).stdout
	require.Contains(t, out, "\narchives:\n")
	for _, tb := range before {
		require.Contains(t, out, "  "+tb.Name+" generation 1: "+target+" ")
	}
	require.Contains(t, out, "table deleted: read from the archive")
	require.Regexp(t, `(?m)^2017-06-11T00:00:00Z\s+a\s`, out, "the timeline marks an archived period")
	// A null in a typed column reads back absent (package parquetfile).
	require.Equal(t, strings.Replace(query, `"gear":null,`, "", 1), mustRun(t, "", "query", store, "--config", cfg, "--tenant", "acme", "--table", "a_table",
		"--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "json").stdout, "read from the archives")
}
