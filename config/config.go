// Package config reads timetable's YAML configuration file.
//
// The file holds the settings of several components, each of which owns
// its own: families, default_family, tables and meta_table make the
// engine's family.Schema, which Config embeds and the engine is opened
// with (engine.Options.Schema); store, mqtt, cors and admin_token_file
// are the CLI's, the MQTT subscriber's and the server's. The engine does
// not import this package.
//
// A file may set only what differs from the defaults: a family gets every
// key it leaves out from the default family (family.Default). The
// families are the ones the file names; the default family, named
// "events", is there only when the file names none, so a deployment never
// manages tables of a family it was not told of. Logical tables not
// listed under tables go to the default family: default_family, or
// "events" when the file defines it or names no family, or else the first
// family the file names.
//
//	families:
//	  - name: events
//	    prefix: tt_events_
//	    period: week            # hour, 6h, 12h, day, week, month, quarter
//	    week_start: sunday
//	    naming: range           # range or date
//	    write_time_grouping: month  # month or none
//	    shards: 1
//	    layout: row             # row or map
//	    billing: on_demand      # of tiers that name none: on_demand or
//	                            # provisioned; provisioned alone (no tiers)
//	                            # is the blog's tiers (family.BlogTiers)
//	    tiers:                  # the defaults:
//	      - {name: hot,  age: 0,         class: standard, pitr: true}
//	      - {name: warm, age: 1 period,  class: standard, pitr: true}
//	      - {name: cold, age: 2 periods, class: infrequent_access}
//	      # pitr: every tier but the last has it unless it says
//	      # a provisioned tier, auto scaled from read/write up to
//	      # max_read/max_write:
//	      # {name: hot, age: 0, billing: provisioned, read: 50, write: 100,
//	      #  max_read: 300, max_write: 1000}
//	      # an on-demand tier prepared for its peak (warm throughput),
//	      # and bounded (on-demand maximum throughput):
//	      # {name: hot, age: 0, warm_write: 8000, max_write: 20000}
//	    pitr_days: 35           # point-in-time recovery of tiers with pitr;
//	                            # 1 to 35, 0 = off
//	    export_max_read: 0      # on-demand maximum of a table while it is
//	                            # archived; 0 = none
//	    backfill: {billing: on_demand}  # tables made after their period
//	                            # ended, while they may be written;
//	                            # or {read: 5, write: 100}; max_read and
//	                            # max_write bound an on-demand backfill
//	                            # and a restored table
//	    prebuild: 1h
//	    grace: 15m
//	    retention: 0            # 0 keeps tables forever; 90d, 12w, 2160h
//	    ttl: 0                  # item expiry after event time; 0 = none
//	    archive: ""             # file://DIR or s3://bucket/prefix: export
//	                            # tables past retention before deleting them;
//	                            # or {target: s3://bucket/prefix, format: parquet}
//	tables:
//	  a_table: {family: events, layout: map, write_path: auto}
//	  b_table:
//	    layout: map             # row or map; default: the family's
//	    write_path: append_first  # auto, create_first or append_first
//	    events_per_item: 250    # a map item's events before a continuation item
//	    rollups: true           # exact hourly and daily rollups
//	store: dynamodb             # or pebble:DIR; --store wins
//	pebble:                     # the embedded store's sizes (PebbleSizes)
//	  memtable_size: 64MiB      # smaller for small devices: 4MiB
//	  wal_preallocate_size: 4MiB
//	  cache_size: 128MiB
//	meta_table: timetable_meta
//	mqtt:                       # subscriptions of timetable serve (Subscription)
//	  - broker: tcp://127.0.0.1:1883
//	    topic: plant/+/telemetry
//	    tenant: acme
//	    table: telemetry
//	    series: 2               # or series_field: device
//	    format: json            # or line
//	cors:
//	  origins: [https://console.example.com]  # pages that may call the API; * for any
//	admin_token_file: /run/secrets/timetable-admin  # turns the admin API on;
//	                            # TIMETABLE_ADMIN_TOKEN wins
//	limits:                     # budgets and limits; 0 = the default
//	  max_body_bytes: 16777216  # a request body or MQTT message
//	  max_events: 100000        # events of a request or MQTT message
//	  max_body_bytes_in_flight: 33554432    # request bodies held at once
//	  max_event_bytes_in_flight: 100663296  # decoded events, HTTP and MQTT
//	  tenant_share: 0.5         # of each budget, one tenant's most
//	  tenant_names_in_metrics: false        # else hashes label tenants
//	  tenant:                   # a tenant's limits without overrides
//	    write_events_per_second: 100000
//	    write_events_burst: 200000
//	    write_bytes_per_second: 16777216
//	    write_bytes_burst: 33554432
//	    max_concurrent_queries: 16
//	    max_query_partitions: 16384
//	    max_concurrent_writes: 8
//	backfill_horizon: 365d      # events older are refused; none for no horizon
//	new_tables:                 # physical tables writes may make
//	  per_request: 100
//	  per_tenant_hour: 200      # each clock hour, all servers together
//	table_quota: 2500           # the account's DynamoDB table quota; writes
//	                            # make tables only below 90% of it
//	archive_method: auto        # DynamoDB's own export/import to s3:// where
//	                            # the endpoint has them; or native, or scan
//	archive_cache:              # s3:// archives' Parquet that queries fetch
//	  dir: ""                   # empty: the system's temporary folder
//	  size: 1GiB                # least recently read archives are evicted
//	key_cache:                  # what a server keeps of API keys
//	  ttl: 5s                   # a key revoked elsewhere works here this
//	                            # long at most; none reads every key
//	  negative_ttl: 1s          # a key made elsewhere waits this long at most
//	  size: 10000               # keys kept, and unknown keys kept
//
// An archive is a target alone, archived in NDJSON (DynamoDB JSON lines,
// what restore reads), or a target and a format: ndjson, or parquet,
// which archives the NDJSON and, beside it, the table's events as Parquet
// for query engines (package archive).
//
// Durations are Go durations ("36h", "15m") or a whole number of days or
// weeks ("90d", "12w"). Tier ages are "0", "N period(s)", a duration, or
// "N periods + duration".
package config

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// Config is a whole configuration, with defaults applied: the engine's
// schema beside the settings of the store, of MQTT and of the server.
type Config struct {
	// Schema holds the families, the logical tables' settings and the
	// meta table (YAML "families", "default_family", "tables" and
	// "meta_table"): what the engine is opened with
	// (engine.Options.Schema).
	family.Schema
	// Store names where the data lives, as the --store flag does
	// ("pebble:DIR" or "dynamodb"); the flag wins when both are given.
	Store string
	// Pebble are the embedded store's sizes (YAML "pebble").
	Pebble PebbleSizes
	// MQTT are the subscriptions `timetable serve` keeps (YAML "mqtt").
	MQTT []Subscription
	// CORSOrigins are the origins whose pages may call the HTTP API from
	// a browser (YAML "cors: {origins: [...]}"); see server.Options.
	CORSOrigins []string
	// AdminTokenFile names a file holding the admin token that turns the
	// server's admin API on (YAML "admin_token_file"); the environment
	// variable TIMETABLE_ADMIN_TOKEN wins over it.
	AdminTokenFile string
	// Limits are the server's budgets and per-request limits and the
	// tenants' default limits (YAML "limits"); see Limits.
	Limits Limits
	// TableBudget bounds the physical tables that writes make (YAML
	// "backfill_horizon", "new_tables: {per_request, per_tenant_hour}"
	// and "table_quota"): what the engine is opened with
	// (engine.Options.Tables); zero fields are the engine's defaults.
	TableBudget TableBudget
	// ArchiveMethod is how archives are made and restored (YAML
	// "archive_method"): "auto" (the default, when empty) uses
	// DynamoDB's own export to S3 and import from S3 where the endpoint
	// has them and the target is s3://, and a scan otherwise; "scan"
	// always scans; "native" always uses DynamoDB's own (package
	// archive's Method).
	ArchiveMethod string
	// ArchiveCache is where queries keep the Parquet files of archives in
	// s3:// targets that they read (YAML "archive_cache": dir, size;
	// "cold_cache", its name in earlier versions, is read as an alias):
	// what package archive's ReaderOptions CacheDir and CacheBytes say;
	// zero fields are its defaults, the system's temporary folder and
	// 1 GiB.
	ArchiveCache ArchiveCache
	// KeyCache bounds what a server keeps of API keys (YAML "key_cache":
	// ttl, negative_ttl, size; "ttl: none" reads every key from the
	// store): what the registry of tenants is opened with
	// (tenant.Options.KeyCache), which the server and MQTT share;
	// zero fields are the defaults, 5s, 1s and 10,000.
	KeyCache tenant.KeyCacheOptions
}

// ArchiveCache is the file's archive_cache.
type ArchiveCache struct {
	// Dir is the cache's folder; empty means the system's temporary
	// folder.
	Dir string
	// Bytes bounds the files kept; zero means 1 GiB.
	Bytes int64
}

// TableBudget is the file's engine.TableBudget: zero fields are the
// engine's defaults (a year, 100, 200 and 2,500).
type TableBudget struct {
	// BackfillHorizon is how old an event may be when written; NoHorizon
	// is set instead by "backfill_horizon: none".
	BackfillHorizon time.Duration
	NoHorizon       bool
	// NewTablesPerRequest and NewTablesPerTenantHour bound the new
	// physical tables of one write and of one tenant's writes in an
	// hour.
	NewTablesPerRequest, NewTablesPerTenantHour int
	// TableQuota is the account's quota of tables.
	TableQuota int
}

// PebbleSizes are the embedded store's memory and disk sizes, in bytes
// (YAML "pebble": memtable_size, wal_preallocate_size, cache_size, each a
// number of bytes or one with a unit: 512KiB, 4MiB, 1GiB). They are the
// fields of pebblestore.Options of the same names, and 0 means that
// package's default. On a small device, memtable_size: 4MiB bounds both
// the memory the memtables take and the disk of the write-ahead logs (at
// most about four memtables' worth), for a slower ingest.
type PebbleSizes struct {
	MemTableSize       int64
	WALPreallocateSize int64
	CacheSize          int64
}

// ErrInvalid marks a configuration that cannot be used.
var ErrInvalid = errors.New("timetable: invalid configuration")

// Default returns the configuration used when there is no file.
func Default() Config {
	return Config{Schema: family.DefaultSchema()}
}

// Load reads a configuration file.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

type fileConfig struct {
	Families      []fileFamily         `yaml:"families"`
	DefaultFamily string               `yaml:"default_family"`
	Tables        map[string]fileTable `yaml:"tables"`
	MetaTable     string               `yaml:"meta_table"`
	Store         string               `yaml:"store"`
	Pebble        filePebble           `yaml:"pebble"`
	MQTT          []fileSubscription   `yaml:"mqtt"`
	CORS          struct {
		Origins []string `yaml:"origins"`
	} `yaml:"cors"`
	AdminTokenFile string `yaml:"admin_token_file"`
	Limits         Limits `yaml:"limits"`
	// BackfillHorizon is a duration, or "none".
	BackfillHorizon string `yaml:"backfill_horizon"`
	NewTables       struct {
		PerRequest    int `yaml:"per_request"`
		PerTenantHour int `yaml:"per_tenant_hour"`
	} `yaml:"new_tables"`
	TableQuota    int              `yaml:"table_quota"`
	ArchiveMethod string           `yaml:"archive_method"`
	ArchiveCache  fileArchiveCache `yaml:"archive_cache"`
	// ColdCache is archive_cache under its name in earlier versions.
	ColdCache fileArchiveCache `yaml:"cold_cache"`
	KeyCache  struct {
		TTL         string `yaml:"ttl"`
		NegativeTTL string `yaml:"negative_ttl"`
		Size        int    `yaml:"size"`
	} `yaml:"key_cache"`
}

type fileFamily struct {
	Name              string       `yaml:"name"`
	Prefix            *string      `yaml:"prefix"`
	Period            *string      `yaml:"period"`
	WeekStart         *string      `yaml:"week_start"`
	Naming            *string      `yaml:"naming"`
	WriteTimeGrouping *string      `yaml:"write_time_grouping"`
	Shards            *int         `yaml:"shards"`
	Layout            *string      `yaml:"layout"`
	ChunkWindow       *string      `yaml:"chunk_window"`
	Billing           *string      `yaml:"billing"`
	Tiers             []fileTier   `yaml:"tiers"`
	Backfill          *fileTier    `yaml:"backfill"`
	Prebuild          *string      `yaml:"prebuild"`
	Grace             *string      `yaml:"grace"`
	Retention         *string      `yaml:"retention"`
	TTL               *string      `yaml:"ttl"`
	Archive           *fileArchive `yaml:"archive"`
	PITRDays          *int         `yaml:"pitr_days"`
	ExportMaxRead     *int64       `yaml:"export_max_read"`
}

// fileArchive is a family's archive: a target alone ("s3://bucket/prefix")
// or a mapping of target and format.
type fileArchive struct {
	Target string `yaml:"target"`
	Format string `yaml:"format"`
}

// UnmarshalYAML reads either form.
func (a *fileArchive) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&a.Target)
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "target" && k != "format" {
				return fmt.Errorf("archive: line %d: unknown key %q: use target and format", n.Content[i].Line, k)
			}
		}
	}
	type plain fileArchive
	var p plain
	if err := n.Decode(&p); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	*a = fileArchive(p)
	return nil
}

type fileTier struct {
	Name      string `yaml:"name"`
	Age       string `yaml:"age"`
	Read      int64  `yaml:"read"`
	Write     int64  `yaml:"write"`
	Billing   string `yaml:"billing"`
	Class     string `yaml:"class"`
	PITR      *bool  `yaml:"pitr"`
	MaxRead   int64  `yaml:"max_read"`
	MaxWrite  int64  `yaml:"max_write"`
	WarmRead  int64  `yaml:"warm_read"`
	WarmWrite int64  `yaml:"warm_write"`
}

// capacity returns the tier's capacity, of billing mode billing unless
// it names its own.
func (ft fileTier) capacity(billing storage.Billing) (storage.Capacity, error) {
	c := storage.Capacity{Billing: billing, Read: ft.Read, Write: ft.Write,
		MaxRead: ft.MaxRead, MaxWrite: ft.MaxWrite, WarmRead: ft.WarmRead, WarmWrite: ft.WarmWrite}
	if ft.Billing != "" {
		b, err := parseBilling(ft.Billing)
		if err != nil {
			return c, err
		}
		c.Billing = b
	}
	class, err := storage.ParseClass(ft.Class)
	if err != nil {
		return c, err
	}
	c.Class = class
	return c, nil
}

// fileArchiveCache is archive_cache as the file spells it.
type fileArchiveCache struct {
	Dir  string `yaml:"dir"`
	Size string `yaml:"size"`
}

type fileTable struct {
	Family        string `yaml:"family"`
	Layout        string `yaml:"layout"`
	WritePath     string `yaml:"write_path"`
	EventsPerItem int    `yaml:"events_per_item"`
	Rollups       bool   `yaml:"rollups"`
}

type filePebble struct {
	MemTableSize       string `yaml:"memtable_size"`
	WALPreallocateSize string `yaml:"wal_preallocate_size"`
	CacheSize          string `yaml:"cache_size"`
}

func (fp filePebble) sizes() (PebbleSizes, error) {
	var p PebbleSizes
	for _, f := range []struct {
		key string
		val string
		to  *int64
	}{
		{"memtable_size", fp.MemTableSize, &p.MemTableSize},
		{"wal_preallocate_size", fp.WALPreallocateSize, &p.WALPreallocateSize},
		{"cache_size", fp.CacheSize, &p.CacheSize},
	} {
		if f.val == "" {
			continue
		}
		n, err := parseBytes(f.val)
		if err != nil {
			return p, fmt.Errorf("pebble: %s: %w", f.key, err)
		}
		*f.to = n
	}
	return p, nil
}

// byteSize is a size as the file writes it: a whole number, then
// optionally a unit.
var byteSize = regexp.MustCompile(`^([0-9]+)\s*(B|KiB|MiB|GiB)?$`)

// parseBytes reads a size in bytes: "4194304", "4MiB", "512 KiB".
func parseBytes(s string) (int64, error) {
	m := byteSize.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q: want a number of bytes, or one with B, KiB, MiB or GiB", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	shift := map[string]uint{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30}[m[2]]
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return n << shift, nil
}

// Parse reads a configuration from YAML.
func Parse(data []byte) (Config, error) {
	var fc fileConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%w: %v", ErrInvalid, describeKeys(err))
	}
	c := Config{Schema: family.Schema{DefaultFamily: fc.DefaultFamily, Tables: map[string]family.Table{}, MetaTable: fc.MetaTable},
		Store: fc.Store, CORSOrigins: fc.CORS.Origins, AdminTokenFile: fc.AdminTokenFile, Limits: fc.Limits}
	if err := c.Limits.validate(); err != nil {
		return Config{}, err
	}
	pebble, err := fc.Pebble.sizes()
	if err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c.Pebble = pebble
	c.TableBudget = TableBudget{NewTablesPerRequest: fc.NewTables.PerRequest, NewTablesPerTenantHour: fc.NewTables.PerTenantHour, TableQuota: fc.TableQuota}
	switch c.ArchiveMethod = fc.ArchiveMethod; c.ArchiveMethod {
	case "", "auto", "native", "scan":
	default:
		return Config{}, fmt.Errorf("%w: archive_method %q: auto, native or scan", ErrInvalid, c.ArchiveMethod)
	}
	ac, acName := fc.ArchiveCache, "archive_cache"
	if fc.ColdCache != (fileArchiveCache{}) {
		if ac != (fileArchiveCache{}) {
			return Config{}, fmt.Errorf("%w: archive_cache and cold_cache, its former name: give one", ErrInvalid)
		}
		ac, acName = fc.ColdCache, "cold_cache"
	}
	c.ArchiveCache.Dir = ac.Dir
	if sz := ac.Size; sz != "" {
		n, err := parseBytes(sz)
		if err == nil && n == 0 {
			err = fmt.Errorf("%q: want more than 0", sz)
		}
		if err != nil {
			return Config{}, fmt.Errorf("%w: %s: size %v", ErrInvalid, acName, err)
		}
		c.ArchiveCache.Bytes = n
	}
	switch h := fc.BackfillHorizon; h {
	case "":
	case "none":
		c.TableBudget.NoHorizon = true
	default:
		d, err := period.ParseDuration(h)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%w: backfill_horizon %q: a positive duration (365d, 8760h) or none", ErrInvalid, h)
		}
		c.TableBudget.BackfillHorizon = d
	}
	if c.TableBudget.NewTablesPerRequest < 0 || c.TableBudget.NewTablesPerTenantHour < 0 || c.TableBudget.TableQuota < 0 {
		return Config{}, fmt.Errorf("%w: new_tables and table_quota must not be negative", ErrInvalid)
	}
	if c.KeyCache, err = keyCache(fc.KeyCache.TTL, fc.KeyCache.NegativeTTL, fc.KeyCache.Size); err != nil {
		return Config{}, err
	}
	seen := map[string]bool{}
	for i, ff := range fc.Families {
		f, err := ff.family()
		if err != nil {
			return Config{}, fmt.Errorf("%w: families[%d]: %v", ErrInvalid, i, err)
		}
		if seen[f.Name] {
			return Config{}, fmt.Errorf("%w: family %q defined twice", ErrInvalid, f.Name)
		}
		seen[f.Name] = true
		c.Families = append(c.Families, f)
	}
	if len(c.Families) == 0 {
		c.Families = append(c.Families, family.Default())
		seen["events"] = true
	}
	if c.DefaultFamily == "" {
		c.DefaultFamily = "events"
		if !seen["events"] {
			c.DefaultFamily = c.Families[0].Name
		}
	}
	for name, ft := range fc.Tables {
		t := family.Table{Family: ft.Family, Layout: family.Layout(ft.Layout), WritePath: family.WritePath(ft.WritePath), EventsPerItem: ft.EventsPerItem, Rollups: ft.Rollups}
		if t.Family == "" {
			t.Family = c.DefaultFamily
		}
		c.Tables[name] = t
	}
	for _, fs := range fc.MQTT {
		c.MQTT = append(c.MQTT, fs.subscription())
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate reports what is wrong with a configuration, if anything: its
// schema (family.Schema.Validate), then its MQTT subscriptions.
func (c Config) Validate() error {
	if err := c.Schema.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	clients := map[string]int{}
	for i, s := range c.MQTT {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("%w: mqtt[%d]: %v", ErrInvalid, i, err)
		}
		// A broker lets one connection per client id: a second would
		// take the session of the first.
		if j, ok := clients[s.Broker+"\x00"+s.ClientID]; ok {
			return fmt.Errorf("%w: mqtt[%d] and mqtt[%d]: one client_id %q on one broker; give each its own", ErrInvalid, j, i, s.ClientID)
		}
		clients[s.Broker+"\x00"+s.ClientID] = i
	}
	return nil
}

func (ff fileFamily) family() (family.Family, error) {
	f := family.Default()
	if ff.Name == "" {
		return f, errors.New("a family needs a name")
	}
	f.Name = ff.Name
	if ff.Name != "events" && ff.Prefix == nil {
		f.Prefix = "tt_" + ff.Name + "_"
	}
	if ff.Prefix != nil {
		f.Prefix = *ff.Prefix
	}
	if ff.Period != nil {
		g, err := period.ParseGranularity(*ff.Period)
		if err != nil {
			return f, fmt.Errorf("period: %w", err)
		}
		f.Granularity.Unit = g.Unit
	}
	if ff.WeekStart != nil {
		d, err := parseWeekday(*ff.WeekStart)
		if err != nil {
			return f, err
		}
		f.Granularity.WeekStart = d
	}
	if ff.Naming != nil {
		s, err := naming.ParseScheme(*ff.Naming)
		if err != nil {
			return f, fmt.Errorf("naming: %w", err)
		}
		f.Naming = s
	}
	if ff.WriteTimeGrouping != nil {
		switch strings.ToLower(*ff.WriteTimeGrouping) {
		case "month", "true", "yes":
			f.WriteTimeGrouping = true
		case "none", "false", "no", "":
			f.WriteTimeGrouping = false
		default:
			return f, fmt.Errorf("write_time_grouping %q: must be month or none", *ff.WriteTimeGrouping)
		}
	}
	if ff.Shards != nil {
		f.Shards = *ff.Shards
	}
	if ff.Layout != nil {
		f.Layout = family.Layout(*ff.Layout)
	}
	if ff.Billing != nil {
		b, err := parseBilling(*ff.Billing)
		if err != nil {
			return f, err
		}
		f.Billing = b
		if b == storage.Provisioned {
			// What "billing: provisioned" meant when the blog's tiers
			// were the defaults.
			f.Tiers = family.BlogTiers()
		}
	}
	if ff.Tiers != nil {
		f.Tiers = nil
		for i, ft := range ff.Tiers {
			age, err := ParseAge(ft.Age)
			if err != nil {
				return f, fmt.Errorf("tier %s: %w", ft.Name, err)
			}
			// A tier with units and no billing mode is provisioned,
			// as it was when provisioned was every family's default.
			billing := f.Billing
			if ff.Billing == nil && (ft.Read != 0 || ft.Write != 0) {
				billing = storage.Provisioned
			}
			c, err := ft.capacity(billing)
			if err != nil {
				return f, fmt.Errorf("tier %s: %w", ft.Name, err)
			}
			// Point-in-time recovery on every tier but the last (the
			// cold one) unless the tier says.
			pitr := i < len(ff.Tiers)-1
			if ft.PITR != nil {
				pitr = *ft.PITR
			}
			f.Tiers = append(f.Tiers, family.Tier{Name: ft.Name, Age: age, Capacity: c, PITR: pitr})
		}
	}
	if ff.Backfill != nil {
		bt := *ff.Backfill
		billing := storage.OnDemand
		if bt.Read != 0 || bt.Write != 0 {
			billing = storage.Provisioned
		}
		if bt.Age != "" || (bt.Name != "" && bt.Name != family.BackfillTier) {
			return f, fmt.Errorf("backfill: takes billing, read, write, class, pitr and the max_ and warm_ limits only")
		}
		c, err := bt.capacity(billing)
		if err != nil {
			return f, fmt.Errorf("backfill: %w", err)
		}
		pitr := true
		if bt.PITR != nil {
			pitr = *bt.PITR
		}
		f.Backfill = family.Tier{Name: family.BackfillTier, Capacity: c, PITR: pitr}
	}
	if ff.PITRDays != nil {
		f.PITRDays = *ff.PITRDays
	}
	if ff.ExportMaxRead != nil {
		f.ExportMaxRead = *ff.ExportMaxRead
	}
	for _, d := range []struct {
		name string
		in   *string
		out  *time.Duration
	}{{"prebuild", ff.Prebuild, &f.Prebuild}, {"grace", ff.Grace, &f.Grace}, {"retention", ff.Retention, &f.Retention}, {"ttl", ff.TTL, &f.TTL}, {"chunk_window", ff.ChunkWindow, &f.ChunkWindow}} {
		if d.in == nil {
			continue
		}
		v, err := period.ParseDuration(*d.in)
		if err != nil {
			return f, fmt.Errorf("%s: %w", d.name, err)
		}
		*d.out = v
	}
	if ff.Archive != nil {
		f.Archive, f.ArchiveFormat = ff.Archive.Target, family.ArchiveFormat(ff.Archive.Format)
	}
	return f, nil
}

func parseBilling(s string) (storage.Billing, error) {
	switch strings.ToLower(s) {
	case "provisioned":
		return storage.Provisioned, nil
	case "on_demand", "on-demand", "ondemand", "pay_per_request":
		return storage.OnDemand, nil
	}
	return "", fmt.Errorf("billing %q: must be provisioned or on_demand", s)
}

func parseWeekday(s string) (time.Weekday, error) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()) || strings.EqualFold(s, d.String()[:3]) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("week_start %q: not a day of the week", s)
}

var periodsAge = regexp.MustCompile(`^(\d+)\s*periods?$`)

// ParseAge reads a tier age: "0", "1 period", "2 periods", a duration, or
// "N periods + duration".
func ParseAge(s string) (family.Age, error) {
	var a family.Age
	for _, part := range strings.Split(s, "+") {
		part = strings.TrimSpace(part)
		if part == "" || part == "0" {
			continue
		}
		if m := periodsAge.FindStringSubmatch(part); m != nil {
			n, _ := strconv.Atoi(m[1])
			a.Periods += n
			continue
		}
		d, err := period.ParseDuration(part)
		if err != nil {
			return a, fmt.Errorf("age %q: use 0, N periods, a duration, or N periods + duration", s)
		}
		a.Duration += d
	}
	return a, nil
}

// keyCache reads the file's key_cache.
func keyCache(ttl, negative string, size int) (tenant.KeyCacheOptions, error) {
	var o tenant.KeyCacheOptions
	switch ttl {
	case "":
	case "none":
		o.TTL = -1
	default:
		d, err := time.ParseDuration(ttl)
		if err != nil || d <= 0 {
			return o, fmt.Errorf("%w: key_cache: ttl %q: a positive duration (5s) or none", ErrInvalid, ttl)
		}
		o.TTL = d
	}
	if negative != "" {
		d, err := time.ParseDuration(negative)
		if err != nil || d <= 0 {
			return o, fmt.Errorf("%w: key_cache: negative_ttl %q: a positive duration (1s)", ErrInvalid, negative)
		}
		o.NegativeTTL = d
	}
	o.Size = size
	if err := o.Validate(); err != nil {
		return o, fmt.Errorf("%w: key_cache: %v", ErrInvalid, err)
	}
	return o, nil
}
