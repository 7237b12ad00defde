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
// key it leaves out from the default family (family.Default), and the default
// family, named "events", is always present unless the file redefines a
// family of that name. Logical tables not listed under tables go to the
// default family (default_family, "events" unless set).
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
//	    billing: provisioned    # provisioned or on_demand
//	    tiers:
//	      - {name: hot,  age: 0,         read: 300, write: 1000}
//	      - {name: warm, age: 1 period,  read: 100, write: 1}
//	      - {name: cold, age: 2 periods, read: 1,   write: 1}
//	    backfill: {billing: on_demand}  # tables made after their period
//	                            # ended, while they may be written;
//	                            # or {read: 5, write: 100}
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
//	backfill_horizon: 365d      # events older are refused; none for no horizon
//	new_tables:                 # physical tables writes may make
//	  per_request: 100
//	  per_tenant_hour: 200      # on each server
//	table_quota: 2500           # the account's DynamoDB table quota; writes
//	                            # make tables only below 90% of it
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
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
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
	// MQTT are the subscriptions `timetable serve` keeps (YAML "mqtt").
	MQTT []Subscription
	// CORSOrigins are the origins whose pages may call the HTTP API from
	// a browser (YAML "cors: {origins: [...]}"); see server.Options.
	CORSOrigins []string
	// AdminTokenFile names a file holding the admin token that turns the
	// server's admin API on (YAML "admin_token_file"); the environment
	// variable TIMETABLE_ADMIN_TOKEN wins over it.
	AdminTokenFile string
	// TableBudget bounds the physical tables that writes make (YAML
	// "backfill_horizon", "new_tables: {per_request, per_tenant_hour}"
	// and "table_quota"): what the engine is opened with
	// (engine.Options.Tables); zero fields are the engine's defaults.
	TableBudget TableBudget
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
	MQTT          []fileSubscription   `yaml:"mqtt"`
	CORS          struct {
		Origins []string `yaml:"origins"`
	} `yaml:"cors"`
	AdminTokenFile string `yaml:"admin_token_file"`
	// BackfillHorizon is a duration, or "none".
	BackfillHorizon string `yaml:"backfill_horizon"`
	NewTables       struct {
		PerRequest    int `yaml:"per_request"`
		PerTenantHour int `yaml:"per_tenant_hour"`
	} `yaml:"new_tables"`
	TableQuota int `yaml:"table_quota"`
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
	Billing           *string      `yaml:"billing"`
	Tiers             []fileTier   `yaml:"tiers"`
	Backfill          *fileTier    `yaml:"backfill"`
	Prebuild          *string      `yaml:"prebuild"`
	Grace             *string      `yaml:"grace"`
	Retention         *string      `yaml:"retention"`
	TTL               *string      `yaml:"ttl"`
	Archive           *fileArchive `yaml:"archive"`
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
	Name    string `yaml:"name"`
	Age     string `yaml:"age"`
	Read    int64  `yaml:"read"`
	Write   int64  `yaml:"write"`
	Billing string `yaml:"billing"`
}

type fileTable struct {
	Family        string `yaml:"family"`
	Layout        string `yaml:"layout"`
	WritePath     string `yaml:"write_path"`
	EventsPerItem int    `yaml:"events_per_item"`
	Rollups       bool   `yaml:"rollups"`
}

// Parse reads a configuration from YAML.
func Parse(data []byte) (Config, error) {
	var fc fileConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c := Config{Schema: family.Schema{DefaultFamily: fc.DefaultFamily, Tables: map[string]family.Table{}, MetaTable: fc.MetaTable},
		Store: fc.Store, CORSOrigins: fc.CORS.Origins, AdminTokenFile: fc.AdminTokenFile}
	if c.DefaultFamily == "" {
		c.DefaultFamily = "events"
	}
	c.TableBudget = TableBudget{NewTablesPerRequest: fc.NewTables.PerRequest, NewTablesPerTenantHour: fc.NewTables.PerTenantHour, TableQuota: fc.TableQuota}
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
	if !seen["events"] {
		c.Families = append(c.Families, family.Default())
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
		for i := range f.Tiers {
			f.Tiers[i].Capacity.Billing = b
		}
	}
	if ff.Tiers != nil {
		f.Tiers = nil
		for _, ft := range ff.Tiers {
			age, err := ParseAge(ft.Age)
			if err != nil {
				return f, fmt.Errorf("tier %s: %w", ft.Name, err)
			}
			billing := f.Billing
			if ft.Billing != "" {
				if billing, err = parseBilling(ft.Billing); err != nil {
					return f, fmt.Errorf("tier %s: %w", ft.Name, err)
				}
			}
			f.Tiers = append(f.Tiers, family.Tier{Name: ft.Name, Age: age, Capacity: storage.Capacity{Billing: billing, Read: ft.Read, Write: ft.Write}})
		}
	}
	if ff.Backfill != nil {
		bt := *ff.Backfill
		billing := storage.OnDemand
		if bt.Read != 0 || bt.Write != 0 {
			billing = storage.Provisioned
		}
		if bt.Billing != "" {
			var err error
			if billing, err = parseBilling(bt.Billing); err != nil {
				return f, fmt.Errorf("backfill: %w", err)
			}
		}
		if bt.Age != "" || (bt.Name != "" && bt.Name != family.BackfillTier) {
			return f, fmt.Errorf("backfill: takes billing, read and write only")
		}
		f.Backfill = family.Tier{Name: family.BackfillTier, Capacity: storage.Capacity{Billing: billing, Read: bt.Read, Write: bt.Write}}
	}
	for _, d := range []struct {
		name string
		in   *string
		out  *time.Duration
	}{{"prebuild", ff.Prebuild, &f.Prebuild}, {"grace", ff.Grace, &f.Grace}, {"retention", ff.Retention, &f.Retention}, {"ttl", ff.TTL, &f.TTL}} {
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
