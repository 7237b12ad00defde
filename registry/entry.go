package registry

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// State is where a table is in its life.
type State string

// The states of an entry.
const (
	// Creating: the entry is written and the table is being created.
	Creating State = "creating"
	// Active: the table exists and takes reads and writes.
	Active State = "active"
	// Archived: the table has a verified archive and still exists.
	Archived State = "archived"
	// Restored: the table was restored from its archive, and is kept
	// until the entry's RestoredUntil, when the lifecycle deletes it
	// again (its archive is still verified).
	Restored State = "restored"
	// Deleted: timetable deleted the table.
	Deleted State = "deleted"
	// Missing: the table was found gone without timetable deleting it.
	Missing State = "missing"
)

// Live reports whether the table of an entry in state s exists, or is
// being made, and so may hold events.
func (s State) Live() bool { return s == Creating || s == Active || s == Archived || s == Restored }

// Entry is what the registry records of one physical table.
type Entry struct {
	// Name is the table's name.
	Name string
	// Policy is the table's family as it was when the table was made;
	// Policy.Name names the family.
	Policy family.Family
	// Ref is the period and write month the table holds.
	Ref naming.Ref
	// State is where the table is in its life.
	State State
	// Generation counts the tables made under this name, from 1.
	Generation int64
	// Revision counts the writes of the entry, from 1 (0 for an entry
	// never written, or written before revisions): Save writes an entry
	// only if it is still at the revision it was read at.
	Revision int64
	// Tier, Capacity and TTLAttribute are as last applied to the table.
	Tier         string
	Capacity     storage.Capacity
	TTLAttribute string
	// ClassChanges are when the table's class was changed, oldest first,
	// within the last family.ClassChangeWindow (older ones are dropped):
	// DynamoDB allows family.MaxClassChanges in that window.
	ClassChanges []time.Time
	// ClassIgnored is the class the table's tier names that the store
	// did not apply, for it ignores table classes (DynamoDB Local,
	// dynalite): the table keeps Capacity.Class, and the lifecycle does
	// not ask again. Empty otherwise.
	ClassIgnored storage.Class
	// CreatedAt is when the table was made (for an adopted table, what
	// the store says); UpdatedAt when the entry last changed.
	CreatedAt time.Time
	UpdatedAt time.Time
	// ArchiveTarget and ArchivedAt say where and when the table was
	// archived and the archive verified; empty and zero until then.
	ArchiveTarget string
	ArchivedAt    time.Time
	// PastArchives are the verified archives of the earlier generations
	// of the table, oldest first: a generation archived and deleted
	// before the table was made again under its name. The engine's cold
	// tier reads them besides the current generation, so that a query
	// answers the same before and after each archive and delete.
	PastArchives []PastArchive
	// RestoredUntil is when a restored table (state Restored) may be
	// deleted again; zero for other states.
	RestoredUntil time.Time
	// FencedAt, once set, is when the lifecycle fenced the table before
	// archiving and deleting it (by the lifecycle's clock): writers
	// refuse to write to a fenced table (see Fenced), so that no
	// acknowledged write lands in a table about to be deleted.
	FencedAt time.Time
	// ChunkedAt, once set, is when the table's events written one at a
	// time were last packed into chunks (package compact), which made
	// its layout chunk if it was not; zero for a table never compacted.
	ChunkedAt time.Time
	// CompactAfter is where a compaction that stopped (a deadline, a
	// kill) resumes: the scan key of the last item it packed. Zero when
	// none is under way.
	CompactAfter storage.Key
	// Physical, once set, is the table that holds the entry's events in
	// place of the table named Name: the table a compaction rewrote it
	// into (package compact); see TableName. Empty for a table never
	// rewritten.
	Physical string
	// Rewrite is the progress of a compaction rewriting the table into a
	// new physical table, nil when none is under way.
	Rewrite *Rewrite
	// RewriteFailed is the last rewrite of the table whose verification
	// failed, and when the next may start; nil when none failed since the
	// table was last rewritten.
	RewriteFailed *RewriteFailure
	// Source says how the entry came to be: SourceCreated, SourceTags or
	// SourceName.
	Source string
	// CreateError is why the last attempt to create the table failed
	// (the account's table quota, a throttled call...), empty once the
	// table exists: an entry left creating says why.
	CreateError string
}

// How an entry came to be.
const (
	// SourceCreated: timetable registered the table before making it.
	SourceCreated = "created"
	// SourceTags: the table was found without an entry and its facts were
	// read from its tags.
	SourceTags = "adopted from tags"
	// SourceName: the table was found without an entry or tags; its facts
	// come from its name and the family's policy at the time.
	SourceName = "adopted from its name"
)

// The durations a fence relies on (see the package documentation):
// writers read a table's entry again at least every DefaultRouteTTL and
// end a write by DefaultWriteTimeout, so that a fence is settled
// DefaultFenceSettle after it was set. A deployment that lengthens the
// first two lengthens the third.
const (
	DefaultRouteTTL     = 10 * time.Second
	DefaultWriteTimeout = time.Minute
	DefaultFenceSettle  = DefaultRouteTTL + DefaultWriteTimeout + 20*time.Second
)

// Fenced reports whether the table takes no more writes: the lifecycle
// fenced it to archive and delete it.
func (e Entry) Fenced() bool { return !e.FencedAt.IsZero() }

// Settled reports whether the table takes no more writes at time now,
// but for a late event of its period now and then, so that reads of it
// may be eventually consistent (half the read units on DynamoDB, and
// reflecting a write within about a second): it is fenced; or its write
// month (write-time grouping) and the family's grace are over, after
// which the engine routes events to the next write month's table; or its
// period and grace are over and it is not a backfill table still in its
// backfill tier. The table taking the writes of now, and a backfill
// being written, are not settled and are read strongly consistent.
func (e Entry) Settled(now time.Time) bool {
	if e.Fenced() {
		return true
	}
	g := e.Policy.Grace
	if !e.Ref.WriteMonth.IsZero() && !now.Before(e.Ref.WriteMonth.End().Add(g)) {
		return true
	}
	if !e.CreatedAt.IsZero() && e.Policy.IsBackfill(e.Ref, e.CreatedAt) && now.Before(e.Policy.BackfillEnd(e.CreatedAt)) {
		return false
	}
	return !now.Before(e.Ref.Period.End.Add(g))
}

// Family returns the name of the table's family.
func (e Entry) Family() string { return e.Policy.Name }

// Shards returns the number of partitions a series is spread over in the
// table.
func (e Entry) Shards() int { return max(e.Policy.Shards, 1) }

// IDScheme returns the scheme of the ids the table's events without a
// client id have: the one its policy records, or event.IDScheme1 for an
// entry that records none (made before schemes were recorded).
func (e Entry) IDScheme() event.IDScheme {
	if e.Policy.IDScheme.Valid() {
		return e.Policy.IDScheme
	}
	return event.IDScheme1
}

// ChunkWindow returns the window of the table's chunks when it was made
// in the chunk layout (its policy records both), and zero for a table of
// rows or map items, which holds no chunks.
func (e Entry) ChunkWindow() time.Duration {
	if e.Policy.Layout != family.LayoutChunk {
		return 0
	}
	return e.Policy.ChunkWindow
}

// Covers reports whether the table is where an event of time eventTime
// written at writeTime may go: its period holds eventTime and, when it is
// grouped by write month, its write month holds writeTime.
func (e Entry) Covers(eventTime, writeTime time.Time) bool {
	return e.CoversIn(eventTime, period.MonthOf(writeTime))
}

// CoversIn is Covers for an event written in writeMonth, for a writer
// that asks it of many events written at one time.
func (e Entry) CoversIn(eventTime time.Time, writeMonth period.Month) bool {
	if !e.Ref.Period.Contains(eventTime) {
		return false
	}
	return e.Ref.WriteMonth.IsZero() || e.Ref.WriteMonth == writeMonth
}

// Spec returns the table's specification as the entry records it: its
// capacity as last applied, and its facts as tags.
func (e Entry) Spec() storage.TableSpec {
	tier, ok := e.Policy.Tier(e.Tier)
	if !ok {
		tier = family.Tier{Name: e.Tier}
	}
	tier.Capacity = e.Capacity
	spec := e.Policy.Spec(e.Ref, tier)
	spec.Name = e.Name
	return spec
}

// NewEntry returns the entry of a table timetable is about to make for ref in
// family f at time now, at the tier the family's rule gives it. The table
// gets f's id scheme, or event.LatestIDScheme when f names none.
func NewEntry(f family.Family, ref naming.Ref, now time.Time) Entry {
	if !f.IDScheme.Valid() {
		f.IDScheme = event.LatestIDScheme
	}
	tier, _ := f.TierFor(ref, now, now)
	spec := f.Spec(ref, tier)
	return Entry{
		Name:         spec.Name,
		Policy:       f,
		Ref:          ref,
		State:        Creating,
		Generation:   1,
		Tier:         tier.Name,
		Capacity:     spec.Capacity,
		TTLAttribute: spec.TTLAttribute,
		CreatedAt:    now.UTC(),
		UpdatedAt:    now.UTC(),
		Source:       SourceCreated,
	}
}

// Attribute names of an entry's item.
const (
	attrName       = "name"
	attrFamily     = "family"
	attrState      = "state"
	attrGeneration = "generation"
	attrRevision   = "revision"
	attrStart      = "period_start"
	attrEnd        = "period_end"
	attrWriteMonth = "write_month"
	attrPolicy     = "policy"
	attrShards     = "shards"
	attrLayout     = "layout"
	attrIDScheme   = "id_scheme"
	attrTier       = "tier"
	attrBilling    = "billing"
	attrRead       = "read"
	attrWrite      = "write"
	attrTTL        = "ttl_attribute"
	attrClass      = "class"
	attrMaxRead    = "max_read"
	attrMaxWrite   = "max_write"
	attrWarmRead   = "warm_read"
	attrWarmWrite  = "warm_write"
	attrClassChg   = "class_changes"
	attrClassIgn   = "class_ignored"
	attrCreated    = "created_at"
	attrUpdated    = "updated_at"
	attrTarget     = "archive_target"
	attrArchived   = "archived_at"
	attrRestored   = "restored_until"
	attrFenced     = "fenced_at"
	attrChunked    = "chunked_at"
	attrCompactPK  = "compact_after_pk"
	attrCompactSK  = "compact_after_sk"
	attrSource     = "source"
	attrCreateErr  = "create_error"
	attrPast       = "past_archives"
	attrPhysical   = "physical"
	attrRewrite    = "rewrite"
	attrRewriteErr = "rewrite_failed"
)

// attrs returns the entry's attributes as stored. Shards, layout and id
// scheme are repeated outside the policy for people reading the meta
// table; the policy's are the ones read back.
func (e Entry) attrs() (map[string]any, error) {
	pol, err := encodePolicy(e.Policy)
	if err != nil {
		return nil, err
	}
	past, err := encodePastArchives(e.PastArchives)
	if err != nil {
		return nil, err
	}
	rewrite, err := encodeRewrite(e.Rewrite)
	if err != nil {
		return nil, err
	}
	failed, err := encodeRewriteFailure(e.RewriteFailed)
	if err != nil {
		return nil, err
	}
	changes := make([]any, 0, len(e.ClassChanges))
	for _, t := range e.ClassChanges {
		changes = append(changes, formatTime(t))
	}
	return map[string]any{
		attrClass:      string(e.Capacity.Class),
		attrMaxRead:    number(e.Capacity.MaxRead),
		attrMaxWrite:   number(e.Capacity.MaxWrite),
		attrWarmRead:   number(e.Capacity.WarmRead),
		attrWarmWrite:  number(e.Capacity.WarmWrite),
		attrClassChg:   changes,
		attrClassIgn:   string(e.ClassIgnored),
		attrName:       e.Name,
		attrFamily:     e.Policy.Name,
		attrState:      string(e.State),
		attrGeneration: number(e.Generation),
		attrRevision:   number(e.Revision + 1),
		attrStart:      formatTime(e.Ref.Period.Start),
		attrEnd:        formatTime(e.Ref.Period.End),
		attrWriteMonth: monthString(e.Ref.WriteMonth),
		attrPolicy:     pol,
		attrShards:     number(int64(e.Shards())),
		attrLayout:     string(e.Policy.Layout),
		attrIDScheme:   number(int64(e.IDScheme())),
		attrTier:       e.Tier,
		attrBilling:    string(e.Capacity.Billing),
		attrRead:       number(e.Capacity.Read),
		attrWrite:      number(e.Capacity.Write),
		attrTTL:        e.TTLAttribute,
		attrCreated:    formatTime(e.CreatedAt),
		attrUpdated:    formatTime(e.UpdatedAt),
		attrTarget:     e.ArchiveTarget,
		attrArchived:   formatTime(e.ArchivedAt),
		attrRestored:   formatTime(e.RestoredUntil),
		attrFenced:     formatTime(e.FencedAt),
		attrChunked:    formatTime(e.ChunkedAt),
		attrCompactPK:  e.CompactAfter.PK,
		attrCompactSK:  e.CompactAfter.SK,
		attrSource:     e.Source,
		attrCreateErr:  e.CreateError,
		attrPast:       past,
		attrPhysical:   e.Physical,
		attrRewrite:    rewrite,
		attrRewriteErr: failed,
	}, nil
}

// decode reads an entry from its item's attributes.
func decode(attrs map[string]any) (Entry, error) {
	var e Entry
	var err error
	str := func(k string) string { s, _ := attrs[k].(string); return s }
	num := func(k string) int64 {
		n, _ := attrs[k].(json.Number)
		v, _ := strconv.ParseInt(string(n), 10, 64)
		return v
	}
	tm := func(k string) time.Time {
		if err != nil || str(k) == "" {
			return time.Time{}
		}
		var t time.Time
		t, err = time.Parse(time.RFC3339Nano, str(k))
		return t
	}
	e.Name = str(attrName)
	e.State = State(str(attrState))
	e.Generation = num(attrGeneration)
	e.Revision = num(attrRevision)
	e.Ref.Period = period.Period{Start: tm(attrStart), End: tm(attrEnd)}
	e.CreatedAt, e.UpdatedAt, e.ArchivedAt = tm(attrCreated), tm(attrUpdated), tm(attrArchived)
	e.RestoredUntil, e.FencedAt, e.ChunkedAt = tm(attrRestored), tm(attrFenced), tm(attrChunked)
	e.CompactAfter = storage.Key{PK: str(attrCompactPK), SK: str(attrCompactSK)}
	if err != nil {
		return Entry{}, fmt.Errorf("registry entry %q: %w", e.Name, err)
	}
	if m := str(attrWriteMonth); m != "" {
		if e.Ref.WriteMonth, err = period.ParseMonth(m); err != nil {
			return Entry{}, fmt.Errorf("registry entry %q: write month: %w", e.Name, err)
		}
	}
	if e.Policy, err = decodePolicy(str(attrPolicy)); err != nil {
		return Entry{}, fmt.Errorf("registry entry %q: %w", e.Name, err)
	}
	e.Policy.Name = str(attrFamily)
	e.Tier = str(attrTier)
	e.Capacity = storage.Capacity{Billing: storage.Billing(str(attrBilling)), Read: num(attrRead), Write: num(attrWrite),
		Class: storage.Class(str(attrClass)), MaxRead: num(attrMaxRead), MaxWrite: num(attrMaxWrite),
		WarmRead: num(attrWarmRead), WarmWrite: num(attrWarmWrite)}
	if l, ok := attrs[attrClassChg].([]any); ok {
		for _, v := range l {
			s, _ := v.(string)
			t, perr := time.Parse(time.RFC3339Nano, s)
			if perr != nil {
				return Entry{}, fmt.Errorf("registry entry %q: class change: %w", e.Name, perr)
			}
			e.ClassChanges = append(e.ClassChanges, t)
		}
	}
	e.ClassIgnored = storage.Class(str(attrClassIgn))
	e.TTLAttribute = str(attrTTL)
	e.ArchiveTarget = str(attrTarget)
	e.Source = str(attrSource)
	e.CreateError = str(attrCreateErr)
	if e.PastArchives, err = decodePastArchives(str(attrPast)); err != nil {
		return Entry{}, fmt.Errorf("registry entry %q: %w", e.Name, err)
	}
	e.Physical = str(attrPhysical)
	if e.Rewrite, err = decodeRewrite(str(attrRewrite)); err != nil {
		return Entry{}, fmt.Errorf("registry entry %q: %w", e.Name, err)
	}
	if e.RewriteFailed, err = decodeRewriteFailure(str(attrRewriteErr)); err != nil {
		return Entry{}, fmt.Errorf("registry entry %q: %w", e.Name, err)
	}
	if e.Name == "" || !e.State.valid() || e.Generation < 1 || !e.Ref.Period.Start.Before(e.Ref.Period.End) {
		return Entry{}, fmt.Errorf("registry entry %q is damaged", e.Name)
	}
	return e, nil
}

// ClassChangesLeft returns how many class changes DynamoDB allows the
// table at time now (family.MaxClassChanges in any
// family.ClassChangeWindow), and when the next one becomes possible if
// none is left.
func (e Entry) ClassChangesLeft(now time.Time) (left int, next time.Time) {
	var recent []time.Time
	for _, t := range e.ClassChanges {
		if now.Sub(t) < family.ClassChangeWindow {
			recent = append(recent, t)
		}
	}
	left = max(family.MaxClassChanges-len(recent), 0)
	if left == 0 {
		next = recent[len(recent)-family.MaxClassChanges].Add(family.ClassChangeWindow)
	}
	return left, next
}

// RecordClassChange notes a class change at time now, dropping changes
// older than family.ClassChangeWindow.
func (e *Entry) RecordClassChange(now time.Time) {
	var kept []time.Time
	for _, t := range e.ClassChanges {
		if now.Sub(t) < family.ClassChangeWindow {
			kept = append(kept, t)
		}
	}
	e.ClassChanges = append(kept, now.UTC())
}

func (s State) valid() bool { return s.Live() || s == Deleted || s == Missing }

func number(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// formatTime formats a time as entries store it: RFC 3339 in UTC, "" for
// the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func monthString(m period.Month) string {
	if m.IsZero() {
		return ""
	}
	return m.String()
}
