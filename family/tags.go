package family

import (
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// Tag keys recorded with every table timetable creates, so that a person
// looking at the tables in the AWS console, and the lifecycle manager, can
// tell what each holds without parsing its name.
const (
	TagFamily      = "timetable:family"
	TagPeriodStart = "timetable:period-start"
	TagPeriodEnd   = "timetable:period-end"
	TagWriteMonth  = "timetable:write-month"
	TagTier        = "timetable:tier"
	TagShards      = "timetable:shards"
	TagLayout      = "timetable:layout"
	// TagIDScheme is the table's event id scheme (event.IDScheme), on
	// tables made since schemes were recorded: a table adopted without
	// it has scheme 1.
	TagIDScheme = "timetable:id-scheme"
	// TagChunkWindow is the chunk window of a table of the chunk layout
	// (Family.ChunkWindow), on such tables only.
	TagChunkWindow = "timetable:chunk-window"
	// TagMeta names the meta table of the deployment that created the
	// table (package registry adds it): a deployment adopts a table it
	// finds without a registry entry only when the tag names its own meta
	// table, or when an operator says so.
	TagMeta = "timetable:meta"
)

// Spec returns the specification of the table ref at the given tier.
func (f Family) Spec(ref naming.Ref, tier Tier) storage.TableSpec {
	c := tier.Capacity
	if c.Billing == "" {
		c.Billing = f.Billing
	}
	c = c.Normal()
	tags := map[string]string{
		TagFamily:      f.Name,
		TagPeriodStart: ref.Period.Start.Format(time.RFC3339),
		TagPeriodEnd:   ref.Period.End.Format(time.RFC3339),
		TagTier:        tier.Name,
		TagShards:      strconv.Itoa(f.Shards),
		TagLayout:      string(f.Layout),
	}
	if !ref.WriteMonth.IsZero() {
		tags[TagWriteMonth] = ref.WriteMonth.String()
	}
	if f.IDScheme.Valid() {
		tags[TagIDScheme] = strconv.Itoa(int(f.IDScheme))
	}
	if f.Layout == LayoutChunk {
		tags[TagChunkWindow] = f.ChunkWindow.String()
	}
	spec := storage.TableSpec{
		Name:               f.Namer().Format(ref),
		Capacity:           c,
		Tags:               tags,
		DeletionProtection: true,
		PITRDays:           f.PITRFor(tier),
	}
	if f.TTL > 0 {
		spec.TTLAttribute = TTLAttribute
	}
	return spec
}

// IDSchemeOf returns the event id scheme a table was made with, from its
// tags: event.IDScheme1 when the tag is missing or bad, since tables made
// before schemes were recorded carry none.
func IDSchemeOf(tags map[string]string) event.IDScheme {
	if n, err := strconv.Atoi(tags[TagIDScheme]); err == nil && event.IDScheme(n).Valid() {
		return event.IDScheme(n)
	}
	return event.IDScheme1
}

// ShardsOf returns the number of shards a table was created with, from its
// tags, or the family's current number when the tag is missing or bad. A
// family's shard count may change; tables keep the count they were written
// with.
func (f Family) ShardsOf(tags map[string]string) int {
	if n, err := strconv.Atoi(tags[TagShards]); err == nil && n >= 1 {
		return n
	}
	return f.Shards
}

// ChunkWindowOf returns the chunk window a table of the chunk layout was
// made with, from its tags: the family's when the tag is missing or bad,
// and DefaultChunkWindow when the family has none either.
func (f Family) ChunkWindowOf(tags map[string]string) time.Duration {
	if d, err := time.ParseDuration(tags[TagChunkWindow]); err == nil && d > 0 {
		return d
	}
	if f.ChunkWindow > 0 {
		return f.ChunkWindow
	}
	return DefaultChunkWindow
}
