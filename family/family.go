// Package family holds the policy of a family of physical tables: how long
// a period is, how tables are named, how many shards a partition is split
// into, which capacity tier a table gets at which age, and how long tables
// are kept.
//
// A family is identified by its table-name prefix. All tenants and logical
// tables routed to a family share its physical tables, as in Fineo's
// design. A table whose name does not parse as one of the configured
// families is never touched by timetable.
//
// Routing is a pure function: TableFor maps an event's time and the time it
// is written to the physical table that holds it. With write-time grouping
// the table also depends on the calendar month of the write, so data that
// arrives months late lands in a table of its own and is never deleted
// before retention says so.
//
// # Schema
//
// A Schema is the whole of an engine's table policy: the families, the
// family and layout of each logical table (Table), and the meta table.
// Schema.Policy resolves one logical table's settings into a TablePolicy
// (its family, its TableLayout, its rollups), which a write or a read
// looks up once and passes down.
//
// The schema lives here, not in the engine or in package config, because
// it is policy as a Family is: pure data, and pure functions over it. The
// engine is opened with one (engine.Options.Schema), and owns it as
// Prometheus' tsdb owns its Options; the configuration file holds one
// (config.Config embeds it) beside the settings of the server, MQTT and
// the store. So the engine is embedded without the YAML package, and the
// YAML package is read without importing the engine.
package family

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// Layout is how events are laid out in items.
type Layout string

// Layouts.
const (
	// LayoutRow stores one item per event.
	LayoutRow Layout = "row"
	// LayoutMap stores one item per partition and millisecond, with one map
	// attribute per field keyed by event id (Fineo's layout).
	LayoutMap Layout = "map"
	// LayoutChunk stores a series' events of one time window in one
	// item, by column and compressed (package engine/chunk).
	LayoutChunk Layout = "chunk"
)

// DefaultChunkWindow is the window of a chunk-layout family that sets
// none: an hour, so that Telegraf's flushes of ten seconds each make an
// item per series and request, and a read of a series' latest events
// reads the newest hour's items.
const DefaultChunkWindow = time.Hour

// Family is the policy shared by a set of physical tables.
type Family struct {
	// Name identifies the family in configuration and in table tags.
	Name string
	// Prefix starts the name of every table of the family.
	Prefix string
	// Granularity is the length of a table's period.
	Granularity period.Granularity
	// Naming is the table-name scheme.
	Naming naming.Scheme
	// WriteTimeGrouping splits a period's table by the month events are
	// written in (Fineo's scheme).
	WriteTimeGrouping bool
	// Shards is the number of partitions an event stream is spread over in
	// each table, for rates above one partition's write limit.
	Shards int
	// Layout is the default item layout of the family's logical tables.
	// It is a fact of each table, recorded in its registry entry's
	// policy when the table is made: a chunk-layout table is read with
	// its window, and a table made in another layout keeps it.
	Layout Layout
	// ChunkWindow is the length of time whose events of one series the
	// chunk layout puts in one item, aligned to the Unix epoch: it must
	// divide a day. Like the layout it is a fact of each table.
	ChunkWindow time.Duration
	// Billing is the billing mode of a tier that names none: on demand
	// by default, AWS's recommended mode since the on-demand price cut of
	// November 2024.
	Billing storage.Billing
	// Tiers are the capacities a table gets as it ages, youngest first. The
	// first tier's age must be zero.
	Tiers []Tier
	// Backfill is the capacity of a table created after its period ended
	// (a backfill, or late data in a new write month) for as long as it
	// may still be written: until the end of the calendar month it was
	// created in (its write month, with write-time grouping), plus Grace.
	// Its Age is not used. The default is on-demand billing, so that a
	// backfill of many past periods costs what its events cost.
	Backfill Tier
	// Prebuild is how long before its period starts a table is created.
	Prebuild time.Duration
	// Grace is how long after its period ends a table keeps its write
	// capacity, for late data.
	Grace time.Duration
	// Retention is how long after its period ends (and, with write-time
	// grouping, after its write month ends) a table is kept; zero keeps
	// tables forever.
	Retention time.Duration
	// TTL, when not zero, gives every item an expiry of its event time
	// plus TTL, in the attribute TTLAttribute.
	TTL time.Duration
	// Archive, when set, is where tables past retention are exported
	// before they are deleted: "file://DIR" or "s3://bucket/prefix". A
	// table is then deleted only once its archive has been read back and
	// verified.
	Archive string
	// ArchiveFormat is the format of the archives: ArchiveNDJSON when
	// empty.
	ArchiveFormat ArchiveFormat
	// ExportMaxRead, when not zero, bounds the read request units a
	// second of a table switched to on demand for its archive's export
	// (DynamoDB's OnDemandThroughput), so that the export cannot run up
	// the bill of a big table at once.
	ExportMaxRead int64
	// PITRDays is the recovery period, in days (1 to 35), of
	// point-in-time recovery on the tables of tiers that have it
	// (Tier.PITR); zero turns it off everywhere.
	PITRDays int
	// IDScheme is how the ids of events without a client id are made in
	// the family's tables (event.IDScheme). It is a fact of each table,
	// kept from when the table was made in its registry entry's policy,
	// and not part of configuration: zero, in a family from
	// configuration, means the scheme of tables made now
	// (registry.NewEntry takes it as event.LatestIDScheme, the engine as
	// its Options.IDScheme).
	IDScheme event.IDScheme
}

// ArchiveFormat is the format a family's tables are archived in (package
// archive).
type ArchiveFormat string

const (
	// ArchiveNDJSON archives a table's items as gzip-compressed DynamoDB
	// JSON lines, which restore reads back exactly: the default.
	ArchiveNDJSON ArchiveFormat = "ndjson"
	// ArchiveParquet archives the NDJSON and, beside it, the table's
	// events as a Parquet file laid out for query engines.
	ArchiveParquet ArchiveFormat = "parquet"
)

// TTLAttribute is the attribute that holds an item's expiry, in Unix
// seconds, when a family sets a TTL.
const TTLAttribute = "tt_expires"

// Tier is the capacity a table gets from a given age on.
type Tier struct {
	Name string
	Age  Age
	// Capacity is the tier's billing mode, units, class and limits.
	Capacity storage.Capacity
	// PITR turns point-in-time recovery on for the tier's tables, with
	// the family's PITRDays; off for a tier without it.
	PITR bool
}

// Age is a table's age, counted from the end of its period: a number of
// periods, or a duration, or both added together.
type Age struct {
	Periods  int
	Duration time.Duration
}

// String formats an age as configuration spells it: "0", "1 period",
// "2 periods", "36h0m0s" or "1 period + 2h0m0s".
func (a Age) String() string {
	switch {
	case a.Periods == 0 && a.Duration == 0:
		return "0"
	case a.Duration == 0:
		return periodsString(a.Periods)
	case a.Periods == 0:
		return a.Duration.String()
	}
	return periodsString(a.Periods) + " + " + a.Duration.String()
}

func periodsString(n int) string {
	if n == 1 {
		return "1 period"
	}
	return strconv.Itoa(n) + " periods"
}

// Default returns the default family: weekly tables starting
// Sunday, range names, write-time grouping by month, one shard, row layout,
// on-demand hot, warm and cold tiers (DefaultTiers), point-in-time
// recovery of 35 days on hot and warm tables, prebuilt an hour ahead,
// with 15 minutes of grace and no retention limit.
func Default() Family {
	return Family{
		Name:              "events",
		Prefix:            "tt_events_",
		Granularity:       period.Granularity{Unit: period.Week, WeekStart: time.Sunday},
		Naming:            naming.Range,
		WriteTimeGrouping: true,
		Shards:            1,
		Layout:            LayoutRow,
		ChunkWindow:       DefaultChunkWindow,
		Billing:           storage.OnDemand,
		Tiers:             DefaultTiers(),
		Backfill:          DefaultBackfill(),
		Prebuild:          time.Hour,
		Grace:             15 * time.Minute,
		PITRDays:          DefaultPITRDays,
	}
}

// DefaultPITRDays is the default recovery period of point-in-time
// recovery: DynamoDB's longest, 35 days.
const DefaultPITRDays = 35

// DefaultTiers returns the default tiers, all on demand, which DynamoDB
// bills by the request, so an idle table costs its storage only: hot
// while a table is current and warm for the next period, both of the
// standard class with point-in-time recovery; cold after that, of the
// Standard-IA class (storage about 60% cheaper, requests about 25%
// dearer) without point-in-time recovery.
func DefaultTiers() []Tier {
	return []Tier{
		{Name: "hot", Age: Age{}, Capacity: storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard}, PITR: true},
		{Name: "warm", Age: Age{Periods: 1}, Capacity: storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard}, PITR: true},
		{Name: "cold", Age: Age{Periods: 2}, Capacity: storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassInfrequentAccess}},
	}
}

// BlogTiers returns the provisioned tiers of the AWS blog of 2018 that
// were timetable's defaults before on demand: hot (1000 WCU, 300 RCU)
// while a table is current, warm (1 WCU, 100 RCU) for the next period,
// cold (1, 1) after that, all of the standard class, with point-in-time
// recovery on hot and warm tables. A configuration that sets "billing:
// provisioned" on a family and no tiers gets them, as it always did.
func BlogTiers() []Tier {
	return []Tier{
		{Name: "hot", Age: Age{}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000}, PITR: true},
		{Name: "warm", Age: Age{Periods: 1}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 100, Write: 1}, PITR: true},
		{Name: "cold", Age: Age{Periods: 2}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 1, Write: 1}},
	}
}

// DefaultBackfill returns the default backfill tier: on-demand billing,
// with point-in-time recovery.
func DefaultBackfill() Tier {
	return Tier{Name: BackfillTier, Capacity: storage.Capacity{Billing: storage.OnDemand}, PITR: true}
}

// MaxClassChanges is how many times DynamoDB lets a table change its
// class in ClassChangeWindow (Developer Guide, "Considerations when
// choosing a table class").
const (
	MaxClassChanges   = 2
	ClassChangeWindow = 30 * 24 * time.Hour
)

// BackfillTier is the name of the backfill tier.
const BackfillTier = "backfill"

// Errors of family policy.
var ErrInvalid = errors.New("timetable: invalid family")

// Validate reports what is wrong with a family, if anything.
func (f Family) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalid, f.Name, fmt.Sprintf(format, args...))
	}
	if f.Name == "" {
		return fmt.Errorf("%w: a family needs a name", ErrInvalid)
	}
	if i := strings.IndexFunc(f.Name, func(r rune) bool { return !tagSafe(r) }); i >= 0 || len(f.Name) > 256 {
		return bad("the name is written into table tags, which take at most 256 letters, digits, spaces and _ . : / = + - @")
	}
	if err := f.Granularity.Validate(); err != nil {
		return bad("period: %v", err)
	}
	if err := f.Namer().Validate(); err != nil {
		return bad("prefix: %v", err)
	}
	if f.Shards < 1 || f.Shards > 1000 {
		return bad("shards %d: must be 1 to 1000", f.Shards)
	}
	switch f.Layout {
	case LayoutRow, LayoutMap, LayoutChunk:
	default:
		return bad("layout %q: must be row, map or chunk", f.Layout)
	}
	if f.Layout == LayoutChunk && (f.ChunkWindow <= 0 || (24*time.Hour)%f.ChunkWindow != 0 || f.ChunkWindow%time.Second != 0) {
		return bad("chunk_window %s: must be whole seconds that divide a day", f.ChunkWindow)
	}
	if f.Billing != storage.Provisioned && f.Billing != storage.OnDemand {
		return bad("billing %q: must be provisioned or on_demand", f.Billing)
	}
	if len(f.Tiers) == 0 {
		return bad("at least one tier is needed")
	}
	if f.Tiers[0].Age != (Age{}) {
		return bad("the first tier must have age 0")
	}
	for i, t := range f.Tiers {
		if t.Name == "" {
			return bad("tier %d has no name", i)
		}
		if err := validCapacity(t.Capacity); err != nil {
			return bad("tier %s: %v", t.Name, err)
		}
		if i > 0 && !f.ageBefore(f.Tiers[i-1].Age, t.Age) {
			return bad("tier %s: ages must increase", t.Name)
		}
		if t.Name == BackfillTier {
			return bad("tier name %q is reserved for the backfill tier", BackfillTier)
		}
	}
	if err := validCapacity(f.Backfill.Capacity); err != nil {
		return bad("backfill tier: %v", err)
	}
	if f.PITRDays < 0 || f.PITRDays > 35 {
		return bad("pitr_days %d: DynamoDB keeps 1 to 35 days (0 turns point-in-time recovery off)", f.PITRDays)
	}
	if f.Prebuild < 0 || f.Grace < 0 || f.Retention < 0 || f.TTL < 0 {
		return bad("prebuild, grace, retention and ttl cannot be negative")
	}
	if f.Archive != "" {
		scheme, rest, ok := strings.Cut(f.Archive, "://")
		if !ok || (scheme != "file" && scheme != "s3") || strings.Trim(rest, "/") == "" {
			return bad("archive %q: must be file://DIR or s3://bucket/prefix", f.Archive)
		}
		if f.Retention == 0 {
			return bad("archive %q: tables are archived when retention ends, and retention is 0 (forever)", f.Archive)
		}
	}
	switch f.ArchiveFormat {
	case "", ArchiveNDJSON, ArchiveParquet:
	default:
		return bad("archive format %q: must be ndjson or parquet", f.ArchiveFormat)
	}
	if f.ArchiveFormat != "" && f.Archive == "" {
		return bad("archive format %q: the archive has no target", f.ArchiveFormat)
	}
	return nil
}

// validCapacity checks a tier's capacity.
func validCapacity(c storage.Capacity) error {
	switch c.Class {
	case "", storage.ClassStandard, storage.ClassInfrequentAccess:
	default:
		return fmt.Errorf("class %q: must be standard or infrequent_access", c.Class)
	}
	if c.MaxRead < 0 || c.MaxWrite < 0 || c.WarmRead < 0 || c.WarmWrite < 0 {
		return errors.New("throughput limits cannot be negative")
	}
	if c.Billing != storage.Provisioned {
		return nil
	}
	if c.Read < 1 || c.Write < 1 {
		return errors.New("provisioned capacity needs read and write of at least 1")
	}
	if (c.MaxRead != 0 && c.MaxRead < c.Read) || (c.MaxWrite != 0 && c.MaxWrite < c.Write) {
		return errors.New("the auto scaling peak (max_read, max_write) must be at least the floor (read, write)")
	}
	if c.WarmRead != 0 || c.WarmWrite != 0 {
		return errors.New("warm throughput is for on-demand tiers")
	}
	return nil
}

// PITRFor returns the recovery period, in days, of point-in-time
// recovery on a table of tier t: the family's PITRDays when the tier has
// point-in-time recovery, else 0 (off).
func (f Family) PITRFor(t Tier) int {
	if !t.PITR {
		return 0
	}
	return f.PITRDays
}

// tagSafe reports whether DynamoDB takes r in a tag value.
func tagSafe(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune(" _.:/=+-@", r)
}

func (f Family) ageBefore(a, b Age) bool {
	nominal := f.Granularity.Nominal()
	return time.Duration(a.Periods)*nominal+a.Duration < time.Duration(b.Periods)*nominal+b.Duration
}

// Namer returns the family's table-name scheme.
func (f Family) Namer() naming.Namer {
	return naming.Namer{
		Prefix:            f.Prefix,
		Scheme:            f.Naming,
		Granularity:       f.Granularity,
		WriteTimeGrouping: f.WriteTimeGrouping,
	}
}

// TableFor returns the table that holds an event of time eventTime written
// at writeTime.
func (f Family) TableFor(eventTime, writeTime time.Time) naming.Ref {
	ref := naming.Ref{Period: f.Granularity.Of(eventTime)}
	if f.WriteTimeGrouping {
		ref.WriteMonth = period.MonthOf(writeTime)
	}
	return ref
}

// TierAt returns the tier of the schedule a table holding ref should have
// at time now: the last tier whose age the table has reached. A table's
// age counts from the start of its period, in calendar periods, so with
// the default tiers a table is hot during its period, warm during the
// next and cold after that, as in the AWS blog. Every tier after the first
// starts Grace later, to leave the table its write capacity for data that
// arrives a little late.
//
// TierAt ignores the backfill tier; TierFor, which knows when the table
// was created, is the rule the engine and the lifecycle manager apply.
func (f Family) TierAt(ref naming.Ref, now time.Time) Tier {
	tier := f.Tiers[0]
	for _, t := range f.Tiers[1:] {
		if !now.Before(f.TierStart(ref, t)) {
			tier = t
		}
	}
	return tier
}

// TierFor returns the tier a table holding ref, created at createdAt,
// should have at time now, and the reason, for people.
//
// A table created before its period ended follows the schedule (TierAt).
// A table created once its period was over holds a backfill or late
// data, which may come at any rate and at any time while the table can
// still be written: it has the backfill tier until the end of the month
// it was created in (its write month, with write-time grouping) plus
// Grace, and from then on the schedule's tier for its period's age,
// usually the last. A zero createdAt (a table whose creation time is not
// known) follows the schedule.
func (f Family) TierFor(ref naming.Ref, createdAt, now time.Time) (Tier, string) {
	if f.IsBackfill(ref, createdAt) {
		until := f.BackfillEnd(createdAt)
		if now.Before(until) {
			return f.backfillTier(), fmt.Sprintf("created %s after its period ended %s: backfill tier until %s (end of the month it was created in + grace %s)",
				stamp(createdAt), stamp(ref.Period.End), stamp(until), f.Grace)
		}
		tier := f.TierAt(ref, now)
		return tier, fmt.Sprintf("backfill ended %s; tier %s for a table of period %s", stamp(until), tier.Name, ref.Period)
	}
	tier := f.TierAt(ref, now)
	if tier.Age == (Age{}) {
		if next := f.nextTier(tier); next != nil {
			return tier, fmt.Sprintf("tier %s until %s", tier.Name, stamp(f.TierStart(ref, *next)))
		}
		return tier, fmt.Sprintf("tier %s", tier.Name)
	}
	return tier, fmt.Sprintf("tier %s from %s (age %s + grace %s)", tier.Name, stamp(f.TierStart(ref, tier)), tier.Age, f.Grace)
}

// IsBackfill reports whether a table holding ref and created at createdAt
// was created for a period already over.
func (f Family) IsBackfill(ref naming.Ref, createdAt time.Time) bool {
	return !createdAt.IsZero() && !createdAt.Before(ref.Period.End)
}

// BackfillEnd returns when a backfill table created at createdAt leaves
// the backfill tier: the end of the calendar month it was created in, plus
// Grace.
func (f Family) BackfillEnd(createdAt time.Time) time.Time {
	return period.MonthOf(createdAt).End().Add(f.Grace)
}

// RestoreCapacity returns the capacity of a table an archive's restore
// creates: on demand, which takes a restore's burst of writes without
// planning, bounded by the backfill tier's on-demand maximum
// (OnDemandThroughput) when that tier is on demand and has one. A restore
// writes a past period's table as a backfill does, so the one setting
// (the backfill tier's max_read and max_write) guards both bills.
func (f Family) RestoreCapacity() storage.Capacity {
	c := storage.Capacity{Billing: storage.OnDemand}
	if b := f.backfillTier().Capacity.Normal(); b.Billing == storage.OnDemand {
		c.MaxRead, c.MaxWrite = b.MaxRead, b.MaxWrite
	}
	return c
}

func (f Family) backfillTier() Tier {
	t := f.Backfill
	if t.Name == "" {
		t = DefaultBackfill()
	}
	return t
}

func (f Family) nextTier(tier Tier) *Tier {
	for i, t := range f.Tiers {
		if t.Name == tier.Name && i+1 < len(f.Tiers) {
			return &f.Tiers[i+1]
		}
	}
	return nil
}

// TierStart returns when a table enters tier t of the schedule: the start
// of its period plus the tier's age, plus Grace for every tier but the
// first. A table of a write month that ends before its period does (with
// write-time grouping, the table of a period's first month) takes no
// more writes once that month and Grace are over, and enters the second
// tier then, if that is earlier.
func (f Family) TierStart(ref naming.Ref, t Tier) time.Time {
	p := ref.Period
	for range t.Age.Periods {
		p = f.Granularity.Next(p)
	}
	at := p.Start.Add(t.Age.Duration)
	if t.Age != (Age{}) {
		at = at.Add(f.Grace)
	}
	if len(f.Tiers) > 1 && t.Name == f.Tiers[1].Name && !ref.WriteMonth.IsZero() {
		if end := ref.WriteMonth.End().Add(f.Grace); end.Before(at) {
			at = end
		}
	}
	return at
}

// stamp formats a time as reasons write it; the zero time is "never".
func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// ExpiresAt returns when a table is past retention: Retention after the
// end of its period and, with write-time grouping, after the end of its
// write month, whichever is later. It returns the zero time when the
// family keeps tables forever.
func (f Family) ExpiresAt(ref naming.Ref) time.Time {
	if f.Retention <= 0 {
		return time.Time{}
	}
	end := ref.Period.End
	if !ref.WriteMonth.IsZero() && ref.WriteMonth.End().After(end) {
		end = ref.WriteMonth.End()
	}
	return end.Add(f.Retention)
}

// Tier returns the tier of the given name, and whether there is one.
func (f Family) Tier(name string) (Tier, bool) {
	if name == BackfillTier {
		return f.backfillTier(), true
	}
	for _, t := range f.Tiers {
		if t.Name == name {
			return t, true
		}
	}
	return Tier{}, false
}
