package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

func TestEmptyFileIsTheDefault(t *testing.T) {
	c, err := config.Parse(nil)
	require.NoError(t, err)
	require.Equal(t, config.Default().Families, c.Families)
	require.Equal(t, "events", c.Family("anything").Name)
}

func TestDesignExample(t *testing.T) {
	c, err := config.Parse([]byte(`
families:
  - name: events
    prefix: tt_events_
    period: week            # weeks start Sunday 00:00 UTC
    naming: range
    write_time_grouping: month
    shards: 1
    layout: row
    billing: provisioned
    tiers:
      - {name: hot,  age: 0,         read: 300, write: 1000}
      - {name: warm, age: 1 period,  read: 100, write: 1}
      - {name: cold, age: 2 periods, read: 1,   write: 1}
    prebuild: 1h
    grace: 15m
    retention: 0            # keep forever unless set
tables:
  a_table: {family: events, layout: map, write_path: auto}
`))
	require.NoError(t, err)
	// The tiers of the blog, provisioned, as this file always meant.
	want := family.Default()
	want.Billing, want.Tiers = storage.Provisioned, family.BlogTiers()
	require.Equal(t, []family.Family{want}, c.Families)
	require.Equal(t, family.Table{Family: "events", Layout: family.LayoutMap, WritePath: "auto"}, c.Tables["a_table"])

	// billing: provisioned alone means the blog's tiers too.
	c, err = config.Parse([]byte("families:\n  - name: events\n    billing: provisioned\n"))
	require.NoError(t, err)
	require.Equal(t, []family.Family{want}, c.Families)

	// Tiers with units and no billing are provisioned, as they were.
	c, err = config.Parse([]byte("families:\n  - name: events\n    tiers:\n      - {name: hot, age: 0, read: 3, write: 4}\n      - {name: cold, age: 1 period, class: infrequent_access}\n"))
	require.NoError(t, err)
	require.Equal(t, []family.Tier{
		{Name: "hot", Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 3, Write: 4}, PITR: true},
		{Name: "cold", Age: family.Age{Periods: 1}, Capacity: storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassInfrequentAccess}},
	}, c.Families[0].Tiers)

	// standard_ia, an alias of infrequent_access, reads as it does.
	alias, err := config.Parse([]byte("families:\n  - name: events\n    tiers:\n      - {name: hot, age: 0, read: 3, write: 4}\n      - {name: cold, age: 1 period, class: standard_ia}\n"))
	require.NoError(t, err)
	require.Equal(t, c.Families, alias.Families)
	_, err = config.Parse([]byte("families:\n  - name: events\n    tiers:\n      - {name: hot, age: 0, class: glacier}\n"))
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorContains(t, err, "must be standard or infrequent_access")
}

func TestOnlyWhatDiffers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "timetable.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
families:
  - name: metrics
    period: day
    naming: date
    write_time_grouping: none
    shards: 6
    billing: on_demand
    retention: 90d
    tiers:
      - {name: hot, age: 0}
      - {name: cold, age: 1 period + 12h, billing: provisioned, read: 5, write: 1}
tables:
  cpu: {family: metrics}
`), 0o644))
	c, err := config.Load(path)
	require.NoError(t, err)
	require.Len(t, c.Families, 1, "only the families the file names")
	m := c.Family("cpu")
	require.Equal(t, "metrics", m.Name)
	require.Equal(t, "tt_metrics_", m.Prefix)
	require.Equal(t, period.Day, m.Granularity.Unit)
	require.Equal(t, naming.Date, m.Naming)
	require.False(t, m.WriteTimeGrouping)
	require.Equal(t, 6, m.Shards)
	require.Equal(t, 90*24*time.Hour, m.Retention)
	require.Equal(t, time.Hour, m.Prebuild, "missing keys get the defaults")
	require.Equal(t, storage.OnDemand, m.Tiers[0].Capacity.Billing)
	require.Equal(t, family.Age{Periods: 1, Duration: 12 * time.Hour}, m.Tiers[1].Age)
	require.Equal(t, "metrics", c.Family("other").Name, "the first family is the default")
}

// A deployment manages the families its configuration names, and the
// default family only when it names none: a second deployment on the
// same endpoint configured for sensors leaves tt_events_ tables alone.
func TestFamiliesAreTheConfiguredOnes(t *testing.T) {
	for _, tc := range []struct {
		yaml     string
		families []string
		def      string
	}{
		{"", []string{"events"}, "events"},
		{"meta_table: tt_meta_b\n", []string{"events"}, "events"},
		{"families:\n  - name: sensors\n", []string{"sensors"}, "sensors"},
		{"families:\n  - name: sensors\n  - name: events\n", []string{"sensors", "events"}, "events"},
		{"families:\n  - name: sensors\n  - name: audit\n    prefix: tt_audit_\ndefault_family: audit\n", []string{"sensors", "audit"}, "audit"},
	} {
		c, err := config.Parse([]byte(tc.yaml))
		require.NoError(t, err, tc.yaml)
		var names []string
		for _, f := range c.Families {
			names = append(names, f.Name)
		}
		require.Equal(t, tc.families, names, tc.yaml)
		require.Equal(t, tc.def, c.DefaultFamily, tc.yaml)
	}
	_, err := config.Parse([]byte("families:\n  - name: sensors\ndefault_family: events\n"))
	require.Error(t, err, "a default family that is not defined")
}

func TestInvalidConfigs(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":          {"families:\n  - name: x\n    perod: day\n", "perod"},
		"bad period":           {"families:\n  - name: x\n    period: fortnight\n", "period"},
		"bad duration":         {"families:\n  - name: x\n    grace: soon\n", "grace"},
		"bad billing":          {"families:\n  - name: x\n    billing: free\n", "billing"},
		"zero shards":          {"families:\n  - name: x\n    shards: 0\n", "shards"},
		"same prefix":          {"families:\n  - name: x\n    prefix: tt_a_\n  - name: y\n    prefix: tt_a_\n", "overlapping prefixes"},
		"unknown family":       {"tables:\n  t: {family: nope}\n", "nope"},
		"bad write path":       {"tables:\n  t: {write_path: sideways}\n", "write_path"},
		"first tier aged":      {"families:\n  - name: x\n    tiers:\n      - {name: a, age: 1 period, read: 1, write: 1}\n", "age 0"},
		"twice":                {"families:\n  - name: x\n  - name: x\n", "twice"},
		"bad tier age":         {"families:\n  - name: x\n    tiers:\n      - {name: a, age: later}\n", "age"},
		"no name":              {"families:\n  - period: day\n", "name"},
		"bad week start":       {"families:\n  - name: x\n    week_start: funday\n", "week_start"},
		"bad archive":          {"families:\n  - name: x\n    retention: 90d\n    archive: ftp://host/dir\n", "archive"},
		"archive forever":      {"families:\n  - name: x\n    archive: file:///var/archive\n", "retention is 0"},
		"bad archive format":   {"families:\n  - name: x\n    retention: 90d\n    archive: {target: file:///a, format: csv}\n", "ndjson or parquet"},
		"archive format alone": {"families:\n  - name: x\n    retention: 90d\n    archive: {format: parquet}\n", "no target"},
		"archive misspelt":     {"families:\n  - name: x\n    retention: 90d\n    archive: {target: file:///a, fromat: parquet}\n", "unknown key \"fromat\""},
		"bad pebble size":      {"pebble:\n  memtable_size: 4MB\n", "memtable_size"},
		"huge pebble size":     {"pebble:\n  cache_size: 9999999999999GiB\n", "too large"},
		"decreasing tiers":     {"families:\n  - name: x\n    tiers:\n      - {name: a, age: 0, read: 1, write: 1}\n      - {name: b, age: 2 periods, read: 1, write: 1}\n      - {name: c, age: 1 period, read: 1, write: 1}\n", "increase"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml))
			require.ErrorIs(t, err, config.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestStoreKey(t *testing.T) {
	c, err := config.Parse([]byte("store: dynamodb\nmeta_table: tt_meta\n"))
	require.NoError(t, err)
	require.Equal(t, "dynamodb", c.Store)
	require.Equal(t, "tt_meta", c.MetaTable)
}

func TestPebbleKey(t *testing.T) {
	c, err := config.Parse([]byte("pebble:\n  memtable_size: 4MiB\n  wal_preallocate_size: 512 KiB\n  cache_size: 16777216\n"))
	require.NoError(t, err)
	require.Equal(t, config.PebbleSizes{MemTableSize: 4 << 20, WALPreallocateSize: 512 << 10, CacheSize: 16 << 20}, c.Pebble)
	require.Zero(t, config.Default().Pebble, "pebblestore's defaults")
}

func TestArchiveKey(t *testing.T) {
	c, err := config.Parse([]byte("families:\n  - name: events\n    retention: 12w\n    archive: s3://bucket/timetable\n"))
	require.NoError(t, err)
	require.Equal(t, "s3://bucket/timetable", c.Families[0].Archive)
	require.Equal(t, 12*7*24*time.Hour, c.Families[0].Retention)
	require.Empty(t, c.Families[0].ArchiveFormat, "a target alone archives in the default format")
	require.Empty(t, config.Default().Families[0].Archive, "no archive by default")

	c, err = config.Parse([]byte("families:\n  - name: events\n    retention: 12w\n    archive: {target: file:///var/lib/timetable/archive, format: parquet}\n"))
	require.NoError(t, err)
	require.Equal(t, "file:///var/lib/timetable/archive", c.Families[0].Archive)
	require.Equal(t, family.ArchiveParquet, c.Families[0].ArchiveFormat)
}

func TestRollupsKey(t *testing.T) {
	c, err := config.Parse([]byte("tables:\n  cpu: {rollups: true}\n"))
	require.NoError(t, err)
	require.True(t, c.Tables["cpu"].Rollups)
	require.False(t, c.Tables["other"].Rollups)
}

func TestTableLayout(t *testing.T) {
	c, err := config.Parse([]byte(`
families:
  - name: events
  - name: wide
    layout: map
tables:
  a: {layout: map, write_path: append_first, events_per_item: 40}
  b: {family: wide}
  c: {family: wide, layout: row}
`))
	require.NoError(t, err)
	require.Equal(t, family.TableLayout{Kind: family.LayoutMap, WritePath: family.WritePathAppendFirst, EventsPerItem: 40}, c.Layout("a"))
	require.Equal(t, family.TableLayout{Kind: family.LayoutMap, WritePath: family.WritePathAuto, EventsPerItem: family.DefaultEventsPerItem}, c.Layout("b"))
	require.Equal(t, family.LayoutRow, c.Layout("c").Kind)
	require.Equal(t, family.LayoutRow, c.Layout("unlisted").Kind)

	for _, bad := range []string{
		"tables: {a: {layout: grid}}",
		"tables: {a: {write_path: sideways}}",
		"tables: {a: {events_per_item: -1}}",
		"tables: {a: {events_per_item: 1000000}}",
	} {
		_, err := config.Parse([]byte(bad))
		require.ErrorIs(t, err, config.ErrInvalid, bad)
	}
}

func TestBackfillTier(t *testing.T) {
	cfg, err := config.Parse([]byte("families:\n  - name: events\n    backfill: {read: 5, write: 100}\n"))
	require.NoError(t, err)
	require.Equal(t, family.Tier{Name: family.BackfillTier, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 5, Write: 100}, PITR: true}, cfg.Families[0].Backfill)
	cfg, err = config.Parse([]byte("families:\n  - name: events\n"))
	require.NoError(t, err)
	require.Equal(t, family.DefaultBackfill(), cfg.Families[0].Backfill)
	_, err = config.Parse([]byte("families:\n  - name: events\n    backfill: {age: 1 period}\n"))
	require.ErrorContains(t, err, "backfill")
}

func TestServerKeys(t *testing.T) {
	c, err := config.Parse([]byte("cors:\n  origins: [https://console.example, \"*\"]\nadmin_token_file: /run/secrets/admin\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"https://console.example", "*"}, c.CORSOrigins)
	require.Equal(t, "/run/secrets/admin", c.AdminTokenFile)
	_, err = config.Parse([]byte("cors:\n  origin: [https://console.example]\n"))
	require.ErrorIs(t, err, config.ErrInvalid, "a misspelt key is refused")
}

func TestTableBudget(t *testing.T) {
	c, err := config.Parse([]byte("backfill_horizon: 90d\nnew_tables: {per_request: 10, per_tenant_hour: 20}\ntable_quota: 10000\n"))
	require.NoError(t, err)
	require.Equal(t, config.TableBudget{BackfillHorizon: 90 * 24 * time.Hour, NewTablesPerRequest: 10, NewTablesPerTenantHour: 20, TableQuota: 10000}, c.TableBudget)
	c, err = config.Parse([]byte("backfill_horizon: none\n"))
	require.NoError(t, err)
	require.True(t, c.TableBudget.NoHorizon)
	c, err = config.Parse(nil)
	require.NoError(t, err)
	require.Zero(t, c.TableBudget, "the engine's defaults")
	for _, bad := range []string{"backfill_horizon: soon", "backfill_horizon: -1h", "new_tables: {per_request: -1}", "table_quota: -5"} {
		_, err := config.Parse([]byte(bad))
		require.ErrorIs(t, err, config.ErrInvalid, bad)
	}
}

func TestArchiveMethod(t *testing.T) {
	c, err := config.Parse(nil)
	require.NoError(t, err)
	require.Empty(t, c.ArchiveMethod, "auto")
	for _, m := range []string{"auto", "native", "scan"} {
		c, err := config.Parse([]byte("archive_method: " + m + "\n"))
		require.NoError(t, err)
		require.Equal(t, m, c.ArchiveMethod)
	}
	_, err = config.Parse([]byte("archive_method: export\n"))
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorContains(t, err, "auto, native or scan")
}

func TestKeyCache(t *testing.T) {
	c, err := config.Parse([]byte("key_cache: {ttl: 10s, negative_ttl: 500ms, size: 500}\n"))
	require.NoError(t, err)
	require.Equal(t, tenant.KeyCacheOptions{TTL: 10 * time.Second, NegativeTTL: 500 * time.Millisecond, Size: 500}, c.KeyCache)
	c, err = config.Parse([]byte("key_cache: {ttl: none}\n"))
	require.NoError(t, err)
	require.True(t, c.KeyCache.Off())
	c, err = config.Parse(nil)
	require.NoError(t, err)
	require.Zero(t, c.KeyCache, "tenant's defaults")
	for _, bad := range []string{"key_cache: {ttl: soon}", "key_cache: {ttl: 0s}", "key_cache: {negative_ttl: -1s}",
		"key_cache: {ttl: 1s, negative_ttl: 2s}", "key_cache: {size: -1}"} {
		_, err := config.Parse([]byte(bad))
		require.ErrorIs(t, err, config.ErrInvalid, bad)
	}
}

func TestArchiveCache(t *testing.T) {
	c, err := config.Parse([]byte("meta_table: m\n"))
	require.NoError(t, err)
	require.Zero(t, c.ArchiveCache, "the archive package's defaults")
	want := config.ArchiveCache{Dir: "/var/cache/timetable", Bytes: 256 << 20}
	for _, key := range []string{"archive_cache", "cold_cache"} {
		c, err = config.Parse([]byte(key + ":\n  dir: /var/cache/timetable\n  size: 256MiB\n"))
		require.NoError(t, err, key)
		require.Equal(t, want, c.ArchiveCache, "%s reads the same", key)
		for _, bad := range []string{"0", "1TB", "-5"} {
			_, err = config.Parse([]byte(key + ":\n  size: " + bad + "\n"))
			require.ErrorIs(t, err, config.ErrInvalid, bad)
			require.ErrorContains(t, err, key+": size")
		}
	}
	_, err = config.Parse([]byte("archive_cache:\n  size: 1GiB\ncold_cache:\n  size: 2GiB\n"))
	require.ErrorIs(t, err, config.ErrInvalid, "the name and its alias together")
}

// A family of the chunk layout takes its window from chunk_window, an
// hour when it names none, and takes a ttl (its chunks expire); a
// window that does not divide a day and chunks named on a logical table
// are refused, naming the setting.
func TestChunkLayout(t *testing.T) {
	c, err := config.Parse([]byte(`
families:
  - name: events
  - {name: metrics, layout: chunk, chunk_window: 30m}
  - {name: hourly, layout: chunk}
tables:
  cpu: {family: metrics}
`))
	require.NoError(t, err)
	require.Equal(t, family.LayoutChunk, c.Layout("cpu").Kind)
	require.Equal(t, 30*time.Minute, c.Family("cpu").ChunkWindow)
	require.Equal(t, time.Hour, c.Families[2].ChunkWindow)
	c, err = config.Parse([]byte("families: [{name: events, layout: chunk, ttl: 30d}]"))
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, c.Families[0].TTL)
	for bad, says := range map[string]string{
		"families: [{name: events, layout: chunk, chunk_window: 7m}]":     "chunk_window",
		"families: [{name: events, layout: chunk, chunk_window: 1500ms}]": "chunk_window",
		"families: [{name: events, layout: rows}]":                        "layout",
		"tables: {a: {layout: chunk}}":                                    "layout chunk is set on its family",
	} {
		_, err := config.Parse([]byte(bad))
		require.ErrorIs(t, err, config.ErrInvalid, bad)
		require.ErrorContains(t, err, says, bad)
	}
}
