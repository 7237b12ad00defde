package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// Lister is what Compare needs of a store: its table listing, and a
// description of the few tables the registry does not explain.
type Lister interface {
	ListTables(ctx context.Context, after string, fn func(name string) bool) error
	DescribeTable(ctx context.Context, name string) (storage.TableInfo, error)
}

// Drift is where the registry and the store's listing of a family's
// tables disagree.
type Drift struct {
	// Unregistered are the entries, from Adopted, of tables that exist
	// without a live entry, whose names parse as the family's and whose
	// family.TagMeta tag names this registry's meta table: tables this
	// deployment made and lost the entry of. An entry of a table timetable
	// deleted or found missing is adopted as its next generation.
	Unregistered []Entry
	// Foreign are the entries tables whose names parse as the family's
	// would be adopted with, but whose tags do not prove them this
	// deployment's: another deployment's on the same endpoint, made by
	// hand, or by a version of timetable before the tag. They are never
	// touched; an operator adopts one with Registry.Adopt (`timetable
	// tables adopt NAME`).
	Foreign []Entry
	// Gone are live entries whose table the store does not list (those
	// still being created are given StaleCreating to appear).
	Gone []Entry
	// Settled are entries left creating whose table exists and is
	// ACTIVE: their creator stopped before marking them active.
	Settled []Entry
}

// StaleCreating is how long an entry may stay creating, with no table
// listed, before Compare calls it gone: long enough for any CreateTable to
// return.
const StaleCreating = 10 * time.Minute

// Compare lists the tables of family f (from its prefix, and from every
// prefix its entries were made with) and compares them with its entries,
// read with List. It makes one ListTables pass per prefix and describes
// only the tables the registry does not explain, so in the steady state it
// costs the listing pages alone. Names that do not parse as the family's,
// under its namer of today or of any entry, are never looked at.
func (r *Registry) Compare(ctx context.Context, store Lister, f family.Family, entries []Entry, now time.Time) (Drift, error) {
	namers := []naming.Namer{f.Namer()}
	byName := map[string]Entry{}
	for _, e := range entries {
		// A rewritten table (Entry.Physical), and the table a rewrite is
		// making or is to drop, are explained by their entry.
		byName[e.Name], byName[e.TableName()] = e, e
		if e.Rewrite != nil && e.Rewrite.Table != "" {
			byName[e.Rewrite.Table] = e
		}
		if n := e.Policy.Namer(); !slices.Contains(namers, n) {
			namers = append(namers, n)
		}
	}
	prefixes := map[string]bool{}
	listed := map[string]bool{}
	var d Drift
	for _, n := range namers {
		if prefixes[n.Prefix] {
			continue
		}
		prefixes[n.Prefix] = true
		var names []string
		err := store.ListTables(ctx, n.Prefix, func(name string) bool {
			if !strings.HasPrefix(name, n.Prefix) {
				return name < n.Prefix
			}
			names = append(names, name)
			return true
		})
		if err != nil {
			return Drift{}, fmt.Errorf("list tables of family %q: %w", f.Name, err)
		}
		for _, name := range names {
			if listed[name] {
				continue
			}
			listed[name] = true
			e, ok := byName[name]
			switch {
			case ok && e.State == Creating:
				info, err := store.DescribeTable(ctx, name)
				if err != nil && !errors.Is(err, storage.ErrTableNotFound) {
					return Drift{}, fmt.Errorf("describe table %q: %w", name, err)
				}
				if err == nil && info.Status == storage.StatusActive {
					e.State, e.UpdatedAt = Active, now.UTC()
					d.Settled = append(d.Settled, e)
				}
			case ok && e.State.Live():
			default:
				ref, policy, parsed := parse(name, f, entries, namers)
				if !parsed {
					continue // not a table of this family: never touched
				}
				info, err := store.DescribeTable(ctx, name)
				if errors.Is(err, storage.ErrTableNotFound) {
					continue // deleted since it was listed
				}
				if err != nil {
					return Drift{}, fmt.Errorf("describe table %q: %w", name, err)
				}
				a := Adopted(policy, ref, info, now)
				if ok {
					a = e.next(a)
					if info.Tags[family.TagIDScheme] == "" {
						// No tag says otherwise: the scheme of the
						// generation before, as Create gives it.
						a.Policy.IDScheme = e.IDScheme()
					}
				}
				if info.Tags[family.TagMeta] == r.table {
					d.Unregistered = append(d.Unregistered, a)
				} else {
					d.Foreign = append(d.Foreign, a)
				}
			}
		}
	}
	for _, e := range entries {
		if !e.State.Live() || listed[e.TableName()] {
			continue
		}
		if e.State == Creating && now.Sub(e.UpdatedAt) < StaleCreating {
			continue
		}
		d.Gone = append(d.Gone, e)
	}
	return d, nil
}

// Unregistered returns Compare's Unregistered: the tables of f the
// registry lacks and that are provably this deployment's, as they would be
// adopted.
func (r *Registry) Unregistered(ctx context.Context, store Lister, f family.Family, entries []Entry, now time.Time) ([]Entry, error) {
	d, err := r.Compare(ctx, store, f, entries, now)
	return d.Unregistered, err
}

// parse reads a table name with the family's namers: the policy of an
// entry of that name if there is one, else the first namer that parses it,
// today's first. It returns the policy the table is adopted with.
func parse(name string, f family.Family, entries []Entry, namers []naming.Namer) (naming.Ref, family.Family, bool) {
	for _, e := range entries {
		if e.Name == name {
			return e.Ref, e.Policy, true
		}
	}
	for _, n := range namers {
		ref, err := n.Parse(name)
		if err != nil {
			continue
		}
		policy := f
		policy.Prefix, policy.Naming, policy.Granularity, policy.WriteTimeGrouping = n.Prefix, n.Scheme, n.Granularity, n.WriteTimeGrouping
		return ref, policy, true
	}
	return naming.Ref{}, family.Family{}, false
}

// CapacityDrift returns why the capacity or the table class the store
// describes for an active table differs from what its entry says was last
// applied, or "" when they agree: someone changed the table behind the
// registry's back (the AWS console, a script, another tool's auto
// scaling). The moves of the table's own auto scaling, between the floor
// and the peak the entry records, are not drift (autoScaledMove). It is
// the one rule that the engine's table listing shows and the lifecycle
// manager's sweep puts right.
//
// The class is compared whatever the billing mode. DynamoDB Local and
// dynalite ignore TableClass and describe every table as STANDARD, so on
// them a table of an infrequent-access tier shows as drift (which the
// lifecycle then tries to put back, at most family.MaxClassChanges times
// in family.ClassChangeWindow); the test backend's
// dynamofault.ControlPlane answers as DynamoDB does.
func CapacityDrift(e Entry, info storage.TableInfo) string {
	if e.State != Active || info.Status != storage.StatusActive {
		return ""
	}
	var why []string
	have, want := normalCapacity(info.Capacity), normalCapacity(e.Capacity)
	have.Class, want.Class = "", ""
	have = autoScaledMove(have, want)
	if have != want {
		why = append(why, fmt.Sprintf("capacity changed outside timetable: the store has %s, the registry %s", capacityString(have), capacityString(want)))
	}
	if hc, wc := info.Capacity.Normal().Class, e.Capacity.Normal().Class; hc != wc {
		why = append(why, fmt.Sprintf("table class changed outside timetable: the store has %s, the registry %s", hc.Name(), wc.Name()))
	}
	return strings.Join(why, "; ")
}

// autoScaledMove returns the store's capacity have as the registry's
// want when want is auto scaled and have is where Application Auto
// Scaling may have moved it: a provisioned table with a peak (MaxRead or
// MaxWrite above the floor Read and Write) has a scalable target on each
// unit, whose target tracking raises and lowers the units between floor
// and peak; units within them are its moves, not drift. DescribeTable
// reports no peak of a provisioned table (it is the scalable target's),
// so the peak is not compared. Units outside the range, or another
// billing mode, are drift as before.
func autoScaledMove(have, want storage.Capacity) storage.Capacity {
	if want.Billing != storage.Provisioned || have.Billing != storage.Provisioned || (want.MaxRead <= 0 && want.MaxWrite <= 0) {
		return have
	}
	within := func(v, floor, peak int64) bool { return v >= floor && v <= max(peak, floor) }
	if within(have.Read, want.Read, want.MaxRead) {
		have.Read = want.Read
	}
	if within(have.Write, want.Write, want.MaxWrite) {
		have.Write = want.Write
	}
	have.MaxRead, have.MaxWrite = want.MaxRead, want.MaxWrite
	return have
}

// normalCapacity spells on-demand billing one way: billing on demand and
// no units, whatever the store reports of units.
func normalCapacity(c storage.Capacity) storage.Capacity {
	if c.Billing == storage.OnDemand || (c.Billing == "" && c.Read == 0 && c.Write == 0) {
		return storage.Capacity{Billing: storage.OnDemand}
	}
	return c
}

func capacityString(c storage.Capacity) string {
	if c.Billing == storage.OnDemand {
		return "on-demand"
	}
	return fmt.Sprintf("%d RCU/%d WCU", c.Read, c.Write)
}
