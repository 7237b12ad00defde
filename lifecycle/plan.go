package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// Plan returns the actions that bring the tables in actual in line with
// the families' policies at time now, family by family in the order given,
// creations first, then table by table in name order. It is a pure
// function: the same arguments give the same plan. Tables of actual whose
// Family is not one of families are ignored.
func Plan(now time.Time, families []family.Family, actual []Table) []Action {
	now = now.UTC()
	var out []Action
	for _, f := range families {
		var tables []Table
		existing := map[string]bool{}
		for _, t := range actual {
			if t.Family == f.Name {
				tables = append(tables, t)
				existing[t.Name] = true
			}
		}
		out = append(out, planCreates(now, f, existing)...)
		slices.SortFunc(tables, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range tables {
			out = append(out, planTable(now, f, t)...)
		}
	}
	return out
}

// planCreates returns the creation of every table events will be written
// to from now until now plus the family's prebuild that does not exist.
func planCreates(now time.Time, f family.Family, existing map[string]bool) []Action {
	var out []Action
	horizon := now.Add(f.Prebuild)
	for t := now; !t.After(horizon); t = nextBoundary(f, t) {
		ref := f.TableFor(t, t)
		name := f.Namer().Format(ref)
		if existing[name] {
			continue
		}
		existing[name] = true
		tier := f.TierAt(ref, now)
		spec := f.Spec(ref, tier)
		var reason string
		switch {
		case t.Equal(now):
			reason = fmt.Sprintf("events written now go to period %s%s", ref.Period, writeMonthSuffix(ref))
		case ref.Period.Start.Equal(t):
			reason = fmt.Sprintf("period starts %s, prebuild %s", stamp(t), f.Prebuild)
		default:
			reason = fmt.Sprintf("write month %s starts %s, prebuild %s", ref.WriteMonth, stamp(t), f.Prebuild)
		}
		out = append(out, Action{
			Kind: Create, Family: f.Name, Table: name, Ref: ref,
			Tier: tier.Name, Capacity: spec.Capacity, Spec: spec, TTLAttribute: spec.TTLAttribute,
			Reason: reason,
		})
	}
	return out
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
	if t.Status != storage.StatusActive {
		return nil
	}
	base := Action{Family: f.Name, Table: t.Name, Ref: t.Ref, Tier: t.Tier}
	if exp := f.ExpiresAt(t.Ref); !exp.IsZero() && !now.Before(exp) {
		why := fmt.Sprintf("retention %s ended %s (%s)", f.Retention, stamp(exp), endedWhat(t.Ref))
		a := base
		a.Target = f.Archive
		switch {
		case f.Archive == "":
			a.Kind, a.Reason = Delete, why
		case !t.Archived:
			a.Kind, a.Reason = Archive, why+"; archive to "+f.Archive+" before deleting"
		default:
			a.Kind, a.Reason = Delete, why+"; archive in "+f.Archive+" verified"
		}
		return []Action{a}
	}

	var out []Action
	tier := f.TierAt(t.Ref, now)
	want := f.Spec(t.Ref, tier).Capacity
	if want != t.Capacity || tier.Name != t.Tier {
		a := base
		a.Kind, a.Tier, a.Capacity = UpdateCapacity, tier.Name, want
		if want.Billing != t.Capacity.Billing {
			a.Kind = UpdateBilling
		}
		a.Reason = tierReason(now, f, t, tier)
		out = append(out, a)
	}
	if f.TTL > 0 && t.TTLAttribute != family.TTLAttribute {
		a := base
		a.Kind, a.TTLAttribute = EnableTTL, family.TTLAttribute
		a.Reason = fmt.Sprintf("family ttl %s: items expire by attribute %s", f.TTL, family.TTLAttribute)
		if t.TTLAttribute != "" {
			a.Reason += ", not " + t.TTLAttribute
		}
		out = append(out, a)
	}
	return out
}

// tierReason explains why a table should be at tier.
func tierReason(now time.Time, f family.Family, t Table, tier family.Tier) string {
	from := f.TierStart(t.Ref, tier)
	var b strings.Builder
	if tier.Age == (family.Age{}) {
		fmt.Fprintf(&b, "tier %s until %s", tier.Name, stamp(nextTierStart(f, t.Ref, tier, now)))
	} else {
		fmt.Fprintf(&b, "tier %s from %s (age %s + grace %s)", tier.Name, stamp(from), tier.Age, f.Grace)
	}
	if age := f.AgePeriod(t.Ref); !age.Equal(t.Ref.Period) {
		fmt.Fprintf(&b, ", late data written during %s: ages from %s", t.Ref.WriteMonth, stamp(age.Start))
	}
	if t.Tier != "" && t.Tier != tier.Name {
		fmt.Fprintf(&b, ", was %s", t.Tier)
	}
	c := t.Capacity
	w := f.Spec(t.Ref, tier).Capacity
	fmt.Fprintf(&b, ": %s", capacityString(c))
	if w != c {
		fmt.Fprintf(&b, " -> %s", capacityString(w))
	}
	return b.String()
}

// nextTierStart returns when the table leaves tier, or the zero time when
// it is the last.
func nextTierStart(f family.Family, ref naming.Ref, tier family.Tier, now time.Time) time.Time {
	for i, t := range f.Tiers {
		if t.Name == tier.Name && i+1 < len(f.Tiers) {
			return f.TierStart(ref, f.Tiers[i+1])
		}
	}
	return time.Time{}
}

func capacityString(c storage.Capacity) string {
	if c.Billing == storage.OnDemand {
		return "on-demand"
	}
	return fmt.Sprintf("%d RCU/%d WCU", c.Read, c.Write)
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
