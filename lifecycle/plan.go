package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// ExportTier is the tier a table past retention is on while it is
// archived: on-demand, so that the export's scan is not throttled.
const ExportTier = "export"

// Plan returns the actions that bring the tables in actual in line with
// the families' policies at time now, family by family in the order given,
// creations first, then table by table in name order. It is a pure
// function: the same arguments give the same plan. Tables of actual whose
// Family is not one of families are ignored.
//
// Each table ages by its own policy (Table.Policy, from its registry
// entry) and family.TierFor; retention and archive target are the
// family's of today.
func Plan(now time.Time, families []family.Family, actual []Table) []Action {
	now = now.UTC()
	var out []Action
	for _, f := range families {
		var tables []Table
		for _, t := range actual {
			if t.Family == f.Name {
				tables = append(tables, t)
			}
		}
		out = append(out, planCreates(now, f, tables)...)
		slices.SortFunc(tables, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range tables {
			out = append(out, planTable(now, f, t)...)
		}
	}
	return out
}

// planCreates returns the creation of every table events will be written
// to from now until now plus the family's prebuild that no table takes
// yet. A table of an earlier policy whose period holds the instant (and
// whose write month, if any, holds it) takes its events, as the engine
// routes them.
func planCreates(now time.Time, f family.Family, tables []Table) []Action {
	var out []Action
	horizon := now.Add(f.Prebuild)
	for t := now; !t.After(horizon); t = nextBoundary(f, t) {
		if slices.ContainsFunc(tables, func(tb Table) bool { return tb.Drift != Gone && covers(tb, t) }) {
			continue
		}
		ref := f.TableFor(t, t)
		e := registry.NewEntry(f, ref, now)
		if slices.ContainsFunc(out, func(a Action) bool { return a.Table == e.Name }) {
			continue
		}
		var reason string
		switch {
		case t.Equal(now):
			reason = fmt.Sprintf("events written now go to period %s%s", ref.Period, writeMonthSuffix(ref))
		case ref.Period.Start.Equal(t):
			reason = fmt.Sprintf("period starts %s, prebuild %s", stamp(t), f.Prebuild)
		default:
			reason = fmt.Sprintf("write month %s starts %s, prebuild %s", ref.WriteMonth, stamp(t), f.Prebuild)
		}
		spec := e.Spec()
		out = append(out, Action{
			Kind: Create, Family: f.Name, Table: e.Name, Ref: ref,
			Tier: e.Tier, Capacity: e.Capacity, Spec: spec, TTLAttribute: spec.TTLAttribute,
			Entry: e, Reason: reason,
		})
	}
	return out
}

// covers reports whether table tb takes events of instant t written at t.
func covers(tb Table, t time.Time) bool {
	return tb.Ref.Period.Contains(t) && (tb.Ref.WriteMonth.IsZero() || tb.Ref.WriteMonth == period.MonthOf(t))
}

// nextBoundary returns the first instant after t at which events go to
// another table: the end of t's period or, with write-time grouping, of
// its month, whichever comes first.
func nextBoundary(f family.Family, t time.Time) time.Time {
	b := f.Granularity.Of(t).End
	if f.WriteTimeGrouping {
		if m := period.MonthOf(t).End(); m.Before(b) {
			b = m
		}
	}
	return b
}

// planTable returns what one existing table needs.
func planTable(now time.Time, f family.Family, t Table) []Action {
	if t.Drift == Changed {
		if t.Capacity.Normal().Class != t.Entry.Capacity.Normal().Class {
			// DynamoDB counts a class change made outside timetable
			// among the two it allows in 30 days: noted as of now, the
			// latest it can have been made.
			t.Entry.RecordClassChange(now)
		}
		// What the store has is what the next change starts from.
		t.Entry.Capacity = t.Capacity
	}
	base := Action{Family: f.Name, Table: t.Name, Ref: t.Ref, Tier: t.Tier, Entry: t.Entry}
	var out []Action
	switch t.Drift {
	case Gone:
		a := base
		if t.Entry.State == registry.Creating {
			// Registered by a creator that stopped before making it, or
			// is making it now (its clock and this one's may disagree on
			// how long ago): what it meant to make is made, as Create
			// finishes it, and the entry stays; marked missing, a table
			// its creator then makes and fills would be read by no
			// query until it was adopted again.
			a.Kind, a.Capacity, a.Spec = Create, t.Entry.Capacity, t.Entry.Spec()
			a.TTLAttribute = a.Spec.TTLAttribute
			a.Reason = "left creating, and the store does not list the table: made"
			return []Action{a}
		}
		a.Kind = Forget
		a.Reason = fmt.Sprintf("the registry has the table %s, the store does not list it", t.Entry.State)
		return []Action{a}
	case Unregistered:
		a := base
		a.Kind = Register
		a.Reason = fmt.Sprintf("the store has the table, the registry does not: registered %s", t.Entry.Source)
		out = append(out, a)
	case Unsettled:
		a := base
		a.Kind = Register
		a.Reason = "left creating by a creator that stopped; the table is ACTIVE"
		out = append(out, a)
	}
	if t.Drift == "" && t.Entry.State == registry.Creating && t.Entry.CreateError != "" {
		// Its creator returned with the store's refusal (the table
		// quota, most often): try again now rather than wait for the
		// entry to go stale.
		a := base
		a.Kind, a.Capacity, a.Spec = Create, t.Entry.Capacity, t.Entry.Spec()
		a.TTLAttribute = a.Spec.TTLAttribute
		a.Reason = "the last attempt failed: " + t.Entry.CreateError
		return append(out, a)
	}
	if t.Status != storage.StatusActive && t.Drift != Unsettled {
		return out
	}
	if t.Entry.State == registry.Restored && now.Before(t.Entry.RestoredUntil) {
		// Restored from its archive for a look, until the operator's
		// end: no tier, TTL, archive or delete until then.
		return out
	}
	p := t.policy(f)
	if exp := p.ExpiresAt(t.Ref); !exp.IsZero() && !now.Before(exp) {
		why := fmt.Sprintf("retention %s ended %s (%s)", p.Retention, stamp(exp), endedWhat(t.Ref))
		a := base
		a.Target, a.Format = p.Archive, p.ArchiveFormat
		switch {
		case p.Archive == "":
			a.Kind, a.Reason = Delete, why
		case !t.Archived:
			if have := t.Capacity.Normal(); have.Billing != storage.OnDemand {
				// The export's strongly consistent scan takes 256 RCU
				// per 1 MB page: on a cold tier's few RCU it is
				// throttled for hours. A refused switch (DynamoDB allows
				// a few a day) is deferred; the export then resumes
				// from its checkpoint each cycle.
				b := base
				// The class stays: a change would spend one of the two
				// DynamoDB allows in 30 days on a table about to go.
				b.Kind, b.Tier, b.Capacity = UpdateBilling, ExportTier, storage.Capacity{Billing: storage.OnDemand, Class: have.Class, MaxRead: p.ExportMaxRead}
				b.Reason = why + "; the archive's scan reads the whole table: on-demand while it is exported, was " + capacityString(t.Capacity)
				out = append(out, b)
			}
			a.Kind, a.Reason = Archive, why+"; archive to "+p.Archive+" before deleting"
		default:
			a.Kind, a.Reason = Delete, why+"; archive in "+p.Archive+" verified"
		}
		return append(out, a)
	}

	tier, reason := p.TierFor(t.Ref, t.CreatedAt, now)
	want, have := p.Spec(t.Ref, tier).Capacity, t.Capacity.Normal()
	var deferred string
	if want.Class != have.Class {
		if t.Entry.ClassIgnored == want.Class {
			// The store ignores table classes: the class is not asked
			// for again.
			want.Class = have.Class
		} else if left, next := t.Entry.ClassChangesLeft(now); left == 0 {
			// DynamoDB allows two class changes in 30 days: keep the
			// class until the older of the two is 30 days old.
			want.Class = have.Class
			deferred = fmt.Sprintf("; class %s kept until %s (%d class changes in %s)",
				have.Class.Name(), stamp(next), family.MaxClassChanges, family.ClassChangeWindow)
		}
	}
	if t.Drift == Changed {
		reason = t.DriftReason + "; " + reason
		if want == have {
			// The store has what the tier says: the registry learns it.
			a := base
			a.Kind, a.Tier = Register, tier.Name
			a.Entry.Capacity, a.Entry.Tier = t.Capacity, tier.Name
			a.Reason = reason + ": recorded" + deferred
			out = append(out, a)
			t.Tier = tier.Name // nothing to change in the store
		}
	}
	if want != have || tier.Name != t.Tier {
		a := base
		a.Kind, a.Tier, a.Capacity, a.PITRDays = UpdateCapacity, tier.Name, want, p.PITRFor(tier)
		if want.Billing != have.Billing {
			a.Kind = UpdateBilling
		}
		a.Reason = reason
		if t.Tier != "" && t.Tier != tier.Name {
			a.Reason += ", was " + t.Tier
		}
		a.Reason += ": " + capacityString(have)
		if want != have {
			a.Reason += " -> " + capacityString(want)
		}
		a.Reason += deferred
		out = append(out, a)
	}
	if p.TTL > 0 && t.TTLAttribute != family.TTLAttribute {
		a := base
		a.Kind, a.TTLAttribute = EnableTTL, family.TTLAttribute
		a.Reason = fmt.Sprintf("family ttl %s: items expire by attribute %s", p.TTL, family.TTLAttribute)
		if t.TTLAttribute != "" {
			a.Reason += ", not " + t.TTLAttribute
		}
		out = append(out, a)
	}
	if why := compactReason(now, f, p, t, tier); why != "" {
		a := base
		a.Kind, a.Reason = Compact, why
		out = append(out, a)
	}
	return out
}

// compactReason returns why table t is to be compacted at time now (at
// tier, by its policy p), "" when it is not: it was made in the chunk
// layout (its registry entry says so, whatever its family says today),
// it has left the hot tier (its period and grace over, on a tier of
// some age, not a backfill's), and it was not compacted since it
// settled. A table fenced while not past
// retention (a compaction that stopped) is compacted again, which lifts
// its fence, and so is a table with a rewrite under way (registry
// Entry.Rewrite), to resume it or delete the table it replaced. A table
// whose last rewrite failed its verification is not compacted again
// before the time the failure set (compact.RetryDue).
func compactReason(now time.Time, f family.Family, p family.Family, t Table, tier family.Tier) string {
	e := t.Entry
	if e.State != registry.Active {
		return ""
	}
	if r := e.Rewrite; r != nil {
		if r.Step == registry.RewriteDrop {
			return fmt.Sprintf("rewritten into %s %s: the table it replaced, %s, is deleted once no read lists it", e.TableName(), stamp(r.SwitchedAt), r.Table)
		}
		return fmt.Sprintf("rewrite into %s at step %s: resumed", r.Table, r.Step)
	}
	if e.Fenced() {
		return fmt.Sprintf("fenced %s for a compaction not finished: resumed", stamp(e.FencedAt))
	}
	if !compact.RetryDue(e, now) {
		return ""
	}
	if e.Policy.Layout != family.LayoutChunk || !e.ChunkedAt.IsZero() && e.Settled(e.ChunkedAt) {
		// A table keeps the layout it was made with (its registry
		// entry's): a row table of a family made chunk since stays rows.
		// Compacted once it took no more writes; a table compacted
		// before (`timetable compact` on a store of its own) may have
		// taken events one at a time since.
		return ""
	}
	backfill := p.IsBackfill(t.Ref, t.CreatedAt) && now.Before(p.BackfillEnd(t.CreatedAt))
	if tier.Age == (family.Age{}) || backfill || !e.Settled(now) {
		return ""
	}
	return fmt.Sprintf("a chunk table of family %s left the hot tier (tier %s): its events written one at a time are packed", f.Name, tier.Name)
}

func capacityString(c storage.Capacity) string {
	c = c.Normal()
	var s string
	switch {
	case c.Billing == storage.OnDemand:
		s = "on-demand"
		if c.WarmRead != 0 || c.WarmWrite != 0 {
			s += fmt.Sprintf(" warm %d/%d", c.WarmRead, c.WarmWrite)
		}
		if c.MaxRead != 0 || c.MaxWrite != 0 {
			s += fmt.Sprintf(" max %d/%d", c.MaxRead, c.MaxWrite)
		}
	case c.MaxRead != 0 || c.MaxWrite != 0:
		s = fmt.Sprintf("%d-%d RCU/%d-%d WCU auto scaled", c.Read, max(c.MaxRead, c.Read), c.Write, max(c.MaxWrite, c.Write))
	default:
		s = fmt.Sprintf("%d RCU/%d WCU", c.Read, c.Write)
	}
	if c.Class == storage.ClassInfrequentAccess {
		s += " " + c.Class.Name()
	}
	return s
}

func endedWhat(ref naming.Ref) string {
	s := "period ended " + stamp(ref.Period.End)
	if !ref.WriteMonth.IsZero() {
		s += ", write month " + ref.WriteMonth.String() + " ended " + stamp(ref.WriteMonth.End())
	}
	return s
}

func writeMonthSuffix(ref naming.Ref) string {
	if ref.WriteMonth.IsZero() {
		return ""
	}
	return ", write month " + ref.WriteMonth.String()
}

// stamp formats a time as reasons write it; the zero time is "never".
func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
