package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Reconciler applies the lifecycle plan to a store. Its methods may be
// called from several goroutines; cycles of one Reconciler do not overlap.
type Reconciler struct {
	opts    Options
	metrics *metrics

	// cycle keeps cycles from overlapping.
	cycle sync.Mutex

	mu struct {
		sync.Mutex
		// archivers caches an Archiver per target.
		archivers map[string]Archiver
	}
}

// New returns a Reconciler, or an error when the options are invalid.
func New(opts Options) (*Reconciler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	r := &Reconciler{opts: opts, metrics: newMetrics(opts.Registerer)}
	r.mu.archivers = map[string]Archiver{}
	return r, nil
}

// Reconcile runs one cycle: it lists the families' tables, plans at the
// clock's time, and applies every action, or none with dryRun. It returns
// every action with its outcome. A refusal by the store defers the action
// to the next cycle and is not an error; any other failure of an action
// makes Reconcile return ErrActionsFailed along with the results. An error
// listing the tables stops the cycle before it acts.
func (r *Reconciler) Reconcile(ctx context.Context, dryRun bool) ([]Result, error) {
	return r.ReconcileKinds(ctx, dryRun)
}

// ReconcileKinds is Reconcile restricted to the given kinds of action
// (all kinds when kinds is empty): the AWS blog's two jobs are
// ReconcileKinds(ctx, false, Create) and ReconcileKinds(ctx, false,
// UpdateBilling, UpdateCapacity, EnableTTL).
func (r *Reconciler) ReconcileKinds(ctx context.Context, dryRun bool, kinds ...Kind) ([]Result, error) {
	r.cycle.Lock()
	defer r.cycle.Unlock()
	if !dryRun && r.opts.Leaser != nil {
		held, err := r.opts.Leaser.Acquire(ctx, r.opts.LeaseName, r.opts.Owner, r.opts.LeaseTTL)
		if err != nil {
			r.metrics.cycles.WithLabelValues("error").Inc()
			return nil, fmt.Errorf("reconcile: acquire lease %q: %w", r.opts.LeaseName, err)
		}
		if !held {
			r.metrics.cycles.WithLabelValues("lease_held").Inc()
			return nil, ErrLeaseHeld
		}
	}
	plan, err := r.Plan(ctx)
	if err != nil {
		r.metrics.cycles.WithLabelValues("error").Inc()
		return nil, err
	}
	var results []Result
	failed := 0
	for _, a := range plan {
		if len(kinds) > 0 && !containsKind(kinds, a.Kind) {
			continue
		}
		if dryRun {
			results = append(results, Result{Action: a, Outcome: DryRun})
			continue
		}
		if err := ctx.Err(); err != nil {
			return results, fmt.Errorf("reconcile: %w", err)
		}
		err := r.apply(ctx, a)
		res := Result{Action: a, Outcome: outcomeOf(err), Err: err}
		results = append(results, res)
		r.metrics.actions.WithLabelValues(string(a.Kind), string(res.Outcome)).Inc()
		log := r.opts.Logger.With("action", a.Kind, "table", a.Table, "tier", a.Tier, "reason", a.Reason)
		switch res.Outcome {
		case Done:
			log.Info("lifecycle action done")
		case Deferred:
			log.Warn("lifecycle action deferred to the next cycle", "err", err)
		default:
			failed++
			log.Error("lifecycle action failed", "err", err)
		}
	}
	if dryRun {
		return results, nil
	}
	r.metrics.lastCycle.Set(float64(r.opts.Clock.Now().Unix()))
	if failed > 0 {
		r.metrics.cycles.WithLabelValues("failed").Inc()
		return results, fmt.Errorf("%w: %d of %d", ErrActionsFailed, failed, len(results))
	}
	r.metrics.cycles.WithLabelValues("ok").Inc()
	return results, nil
}

func containsKind(kinds []Kind, k Kind) bool {
	for _, o := range kinds {
		if o == k {
			return true
		}
	}
	return false
}

// Plan lists the families' tables and returns the plan for now, without
// applying it.
func (r *Reconciler) Plan(ctx context.Context) ([]Action, error) {
	now := r.opts.Clock.Now()
	tables, err := r.Tables(ctx)
	if err != nil {
		return nil, err
	}
	// Ask the archiver only about tables the plan would archive or delete.
	for i, t := range tables {
		f := r.family(t.Family)
		if f.Archive == "" {
			continue
		}
		if exp := f.ExpiresAt(t.Ref); exp.IsZero() || now.Before(exp) {
			continue
		}
		a, err := r.archiver(f.Archive)
		if err != nil {
			continue // planned as an archive, which fails and says why
		}
		ok, err := a.Verified(ctx, t.Name)
		if err != nil {
			return nil, fmt.Errorf("plan: is table %q archived in %s: %w", t.Name, f.Archive, err)
		}
		tables[i].Archived = ok
	}
	return Plan(now, r.opts.Families, tables), nil
}

// Tables lists the tables of every family, as Plan takes them: only the
// tables whose names parse as the family's.
func (r *Reconciler) Tables(ctx context.Context) ([]Table, error) {
	var out []Table
	for _, f := range r.opts.Families {
		namer := f.Namer()
		var names []string
		err := r.opts.Store.ListTables(ctx, f.Prefix, func(name string) bool {
			if !strings.HasPrefix(name, f.Prefix) {
				return false
			}
			if _, err := namer.Parse(name); err == nil {
				names = append(names, name)
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("list tables of family %q: %w", f.Name, err)
		}
		for _, name := range names {
			ref, _ := namer.Parse(name)
			info, err := r.opts.Store.DescribeTable(ctx, name)
			if errors.Is(err, storage.ErrTableNotFound) {
				continue // deleted since it was listed
			}
			if err != nil {
				return nil, fmt.Errorf("list tables of family %q: %w", f.Name, err)
			}
			out = append(out, Table{
				Name: name, Family: f.Name, Ref: ref,
				Tier:         info.Tags[family.TagTier],
				Capacity:     info.Capacity,
				Status:       info.Status,
				TTLAttribute: info.TTLAttribute,
				ItemCount:    info.ItemCount,
			})
		}
	}
	return out, nil
}

func (r *Reconciler) family(name string) family.Family {
	for _, f := range r.opts.Families {
		if f.Name == name {
			return f
		}
	}
	return family.Family{}
}

// archiver returns the Archiver of a target, opening it on first use.
func (r *Reconciler) archiver(target string) (Archiver, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.mu.archivers[target]; ok {
		return a, nil
	}
	if r.opts.OpenArchiver == nil {
		return nil, fmt.Errorf("no archiver for %s in this build", target)
	}
	a, err := r.opts.OpenArchiver(target, r.opts.Store)
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", target, err)
	}
	r.mu.archivers[target] = a
	return a, nil
}

// apply carries out one action. Every action is idempotent: applying it
// again, or to a store that has it applied already, changes nothing.
func (r *Reconciler) apply(ctx context.Context, a Action) error {
	st := r.opts.Store
	switch a.Kind {
	case Create:
		if err := st.CreateTable(ctx, a.Spec); err != nil && !errors.Is(err, storage.ErrTableExists) {
			return err
		}
		return nil
	case UpdateBilling, UpdateCapacity:
		c := a.Capacity
		return st.UpdateTable(ctx, a.Table, storage.TableUpdate{Capacity: &c, Tags: map[string]string{family.TagTier: a.Tier}})
	case EnableTTL:
		return st.UpdateTable(ctx, a.Table, storage.TableUpdate{TTLAttribute: a.TTLAttribute})
	case Archive:
		ar, err := r.archiver(a.Target)
		if err != nil {
			return err
		}
		return ar.Archive(ctx, a.Table)
	case Delete:
		if a.Target != "" {
			// The plan saw a verified archive; look again right before
			// the one step that cannot be undone.
			ar, err := r.archiver(a.Target)
			if err != nil {
				return err
			}
			ok, err := ar.Verified(ctx, a.Table)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("delete table %q: archive in %s is not verified", a.Table, a.Target)
			}
		}
		if err := st.DeleteTable(ctx, a.Table); err != nil && !errors.Is(err, storage.ErrTableNotFound) {
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}
