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
package family

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
)

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
	Layout Layout
	// Billing is the billing mode of new tables; tiers may override it.
	Billing storage.Billing
	// Tiers are the capacities a table gets as it ages, youngest first. The
	// first tier's age must be zero.
	Tiers []Tier
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
}

// TTLAttribute is the attribute that holds an item's expiry, in Unix
// seconds, when a family sets a TTL.
const TTLAttribute = "tt_expires"

// Tier is the capacity a table gets from a given age on.
type Tier struct {
	Name     string
	Age      Age
	Capacity storage.Capacity
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

// Default returns the default family of DESIGN.md: weekly tables starting
// Sunday, range names, write-time grouping by month, one shard, row layout,
// the AWS blog's hot, warm and cold tiers, prebuilt an hour ahead, with 15
// minutes of grace and no retention limit.
func Default() Family {
	return Family{
		Name:              "events",
		Prefix:            "tt_events_",
		Granularity:       period.Granularity{Unit: period.Week, WeekStart: time.Sunday},
		Naming:            naming.Range,
		WriteTimeGrouping: true,
		Shards:            1,
		Layout:            LayoutRow,
		Billing:           storage.Provisioned,
		Tiers:             DefaultTiers(),
		Prebuild:          time.Hour,
		Grace:             15 * time.Minute,
	}
}

// DefaultTiers returns the AWS blog's tiers: hot (1000 WCU, 300 RCU) while
// a table is current, warm (1 WCU, 100 RCU) for the next period, cold (1,
// 1) after that.
func DefaultTiers() []Tier {
	return []Tier{
		{Name: "hot", Age: Age{}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000}},
		{Name: "warm", Age: Age{Periods: 1}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 100, Write: 1}},
		{Name: "cold", Age: Age{Periods: 2}, Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 1, Write: 1}},
	}
}

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
	if err := f.Granularity.Validate(); err != nil {
		return bad("period: %v", err)
	}
	if err := f.Namer().Validate(); err != nil {
		return bad("prefix: %v", err)
	}
	if f.Shards < 1 || f.Shards > 1000 {
		return bad("shards %d: must be 1 to 1000", f.Shards)
	}
	if f.Layout != LayoutRow && f.Layout != LayoutMap {
		return bad("layout %q: must be row or map", f.Layout)
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
		c := t.Capacity
		if c.Billing == storage.Provisioned && (c.Read < 1 || c.Write < 1) {
			return bad("tier %s: provisioned capacity needs read and write of at least 1", t.Name)
		}
		if i > 0 && !f.ageBefore(f.Tiers[i-1].Age, t.Age) {
			return bad("tier %s: ages must increase", t.Name)
		}
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
	return nil
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

// TierAt returns the tier a table should have at time now: the last tier
// whose age the table has reached. A table's age counts from the start of
// its age period (see AgePeriod), in calendar periods, so with the default
// tiers a table is hot during its period, warm during the next and cold
// after that, as in the AWS blog. Every tier after the first starts Grace
// later, to leave the table its write capacity for data that arrives a
// little late.
//
// The engine creates tables with this tier and the lifecycle manager moves
// them to it, so both always agree.
func (f Family) TierAt(ref naming.Ref, now time.Time) Tier {
	tier := f.Tiers[0]
	for _, t := range f.Tiers[1:] {
		if !now.Before(f.TierStart(ref, t)) {
			tier = t
		}
	}
	return tier
}

// AgePeriod returns the period a table ages from: the period it holds,
// unless, with write-time grouping, the table was made for late data.
//
// A table is written during its write month. When the write month begins
// before the table's period ends, the table takes its events as they
// happen and ages with its period, as the AWS blog's tables do. When the
// write month begins after the period has ended, every write to the table
// is late data (a device back after weeks offline), and may come at any
// time in the write month: the table then ages as if it held the last
// period that starts in its write month, so it keeps the first tier, and
// its write capacity, until its write month is over (plus Grace), and
// steps down from there.
func (f Family) AgePeriod(ref naming.Ref) period.Period {
	m := ref.WriteMonth
	if m.IsZero() || m.Start().Before(ref.Period.End) {
		return ref.Period
	}
	return f.Granularity.Of(m.End().Add(-time.Nanosecond))
}

// TierStart returns when a table enters tier t: the start of its age
// period plus the tier's age, plus Grace for every tier but the first.
func (f Family) TierStart(ref naming.Ref, t Tier) time.Time {
	p := f.AgePeriod(ref)
	for range t.Age.Periods {
		p = f.Granularity.Next(p)
	}
	at := p.Start.Add(t.Age.Duration)
	if t.Age != (Age{}) {
		at = at.Add(f.Grace)
	}
	return at
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
	for _, t := range f.Tiers {
		if t.Name == name {
			return t, true
		}
	}
	return Tier{}, false
}
