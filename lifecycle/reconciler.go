package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Reconciler applies the lifecycle plan to a store. Its methods may be
// called from several goroutines; cycles of one Reconciler do not overlap.
type Reconciler struct {
	opts     Options
	metrics  *metrics
	registry *registry.Registry

	// cycle keeps cycles from overlapping.
	cycle sync.Mutex

	mu struct {
		sync.Mutex
		// archivers caches an Archiver per target and format.
		archivers map[archiverKey]Archiver
		// metaReady is set once the meta table is known to exist.
		metaReady bool
		// last is the last cycle that was not a dry run; ran says
		// whether there was one.
		last Cycle
		ran  bool
		// swept is when the last capacity sweep ran, sweepCursor the
		// last table it described (sweep.go).
		swept       time.Time
		sweepCursor string
		// classWarned is set once a store's ignoring of table classes
		// was reported.
		classWarned bool
	}
}

// errClassIgnored marks an action done but for its table class, which the
// store ignores (registry.Entry.ClassIgnored).
var errClassIgnored = errors.New("the store ignores table classes")

// warnClassIgnored reports, once, that the store ignores table classes.
func (r *Reconciler) warnClassIgnored(err error) {
	r.mu.Lock()
	warned := r.mu.classWarned
	r.mu.classWarned = true
	r.mu.Unlock()
	if !warned {
		r.opts.Logger.Warn("lifecycle: the store ignores table classes: tables keep theirs, and the registry records the class each tier names as ignored", "err", err)
	}
}

// New returns a Reconciler, or an error when the options are invalid.
func New(opts Options) (*Reconciler, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := &Reconciler{opts: opts, metrics: newMetrics(opts.Registerer), registry: registry.New(opts.Store, opts.MetaTable)}
	r.mu.archivers = map[archiverKey]Archiver{}
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
	start := r.opts.Clock.Now()
	results, outcome, err := r.reconcile(ctx, dryRun, kinds)
	if outcome != "" {
		r.metrics.cycles.WithLabelValues(outcome).Inc()
	}
	if !dryRun {
		if outcome == "" {
			outcome = CycleInterrupted
		}
		r.record(Cycle{Start: start, End: r.opts.Clock.Now(), Outcome: outcome, Err: err, Results: results})
	}
	return results, err
}

// reconcile is one cycle of ReconcileKinds, which it returns the results
// of along with the cycle's outcome, or "" for a cycle its context
// stopped.
func (r *Reconciler) reconcile(ctx context.Context, dryRun bool, kinds []Kind) ([]Result, string, error) {
	if err := r.ensureMeta(ctx, dryRun); err != nil {
		return nil, CycleError, err
	}
	if !dryRun && r.opts.Leaser != nil {
		held, err := r.opts.Leaser.Acquire(ctx, r.opts.LeaseName, r.opts.Owner, r.opts.LeaseTTL)
		if err != nil {
			return nil, CycleError, fmt.Errorf("reconcile: acquire lease %q: %w", r.opts.LeaseName, err)
		}
		if !held {
			return nil, CycleLeaseHeld, ErrLeaseHeld
		}
		// The lease is renewed while the cycle acts, so that an archive
		// longer than the lease's TTL is never joined by another
		// server's; a cycle that loses its lease stops acting.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		stopRenewing := r.renewLease(ctx, r.opts.Leaser, r.opts.LeaseName, cancel)
		defer func() {
			stopRenewing()
			cancel(nil)
			// The cycle is over: give the lease up rather than hold it
			// for its whole TTL, so a scheduled invocation a minute
			// later is not turned away.
			if err := r.opts.Leaser.Release(context.WithoutCancel(ctx), r.opts.LeaseName, r.opts.Owner); err != nil {
				r.opts.Logger.Warn("lifecycle: release lease", "lease", r.opts.LeaseName, "err", err)
			}
		}()
	}
	plan, err := r.Plan(ctx)
	if err != nil {
		return nil, CycleError, err
	}
	var results []Result
	failed := 0
	written := map[string]bool{}
	for _, a := range plan {
		// Mending the registry is part of every job: the others record
		// their changes in it.
		if len(kinds) > 0 && !containsKind(kinds, a.Kind) && a.Kind != Register && a.Kind != Forget {
			continue
		}
		if dryRun {
			results = append(results, Result{Action: a, Outcome: DryRun})
			continue
		}
		if ctx.Err() != nil {
			return results, "", fmt.Errorf("reconcile: %w", context.Cause(ctx))
		}
		if written[a.Table] {
			// An earlier action of this cycle wrote the table's entry:
			// this one starts from what it wrote, not from the plan's
			// copy, which a Save refuses (registry.Entry.Revision).
			if cur, err := r.registry.Get(ctx, a.Family, a.Entry.Ref.Period.Start, a.Entry.Name); err == nil && cur.Generation == a.Entry.Generation {
				a.Entry = cur
			}
		}
		err := r.apply(ctx, a)
		if err == nil {
			written[a.Table] = true
		}
		if a.Kind == Create {
			switch {
			case errors.Is(err, storage.ErrTableQuota):
				r.metrics.tableQuota.Set(1)
				err = fmt.Errorf("%w: raise \"Table count for this account\" in Service Quotas, or keep fewer tables (a shorter retention, longer periods; timetable plan warns near the quota): %w", storage.ErrTableQuota, err)
			case err == nil:
				r.metrics.tableQuota.Set(0)
			}
		}
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
		return results, "", nil
	}
	r.metrics.lastCycle.Set(float64(r.opts.Clock.Now().Unix()))
	if failed > 0 {
		return results, CycleFailed, fmt.Errorf("%w: %d of %d", ErrActionsFailed, failed, len(results))
	}
	return results, CycleOK, nil
}

// ErrLeaseLost ends the actions of a cycle whose lease another server
// took, or that could not be renewed before it lapsed.
var ErrLeaseLost = errors.New("timetable: lifecycle lease lost")

// renewLease renews the cycle's lease every third of its TTL until the
// returned function is called, which waits for the renewing goroutine to
// end. When the lease is held by another owner, or could not be renewed
// for half its TTL, it cancels the cycle with ErrLeaseLost. The wait
// between renewals is real time (the lease's expiry is the Leaser's
// clock's).
func (r *Reconciler) renewLease(ctx context.Context, leaser Leaser, name string, cancel context.CancelCauseFunc) (stop func()) {
	every := max(r.opts.LeaseTTL/3, time.Millisecond)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		renewed := r.opts.Clock.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			held, err := leaser.Acquire(ctx, name, r.opts.Owner, r.opts.LeaseTTL)
			switch {
			case err == nil && held:
				renewed = r.opts.Clock.Now()
			case err == nil:
				r.opts.Logger.Error("lifecycle: lease taken by another server; stopping", "lease", name)
				cancel(ErrLeaseLost)
				return
			case ctx.Err() != nil:
				return
			default:
				r.opts.Logger.Warn("lifecycle: renew lease", "lease", name, "err", err)
				if r.opts.Clock.Now().Sub(renewed) > r.opts.LeaseTTL/2 {
					cancel(fmt.Errorf("%w: not renewed since %s: %w", ErrLeaseLost, renewed.Format(time.RFC3339), err))
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
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
	if err := r.sweep(ctx, now, tables); err != nil {
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
		a, err := r.archiver(f.Archive, f.ArchiveFormat)
		if err != nil {
			continue // planned as an archive, which fails and says why
		}
		ok, err := a.Verified(ctx, t.Name)
		if err != nil {
			return nil, fmt.Errorf("plan: is table %q archived in %s: %w", t.Name, f.Archive, err)
		}
		tables[i].Archived = ok
	}
	return r.skewed(now, Plan(now, r.opts.Families, tables)), nil
}

// Tables reads the tables of every family from the registry, as Plan
// takes them, with the drift a listing of the store finds: one registry
// Query and one ListTables pass per family (per prefix the family has had),
// plus a DescribeTable only for tables the registry does not explain. In
// the steady state a cycle makes no call per table.
func (r *Reconciler) Tables(ctx context.Context) ([]Table, error) {
	now := r.opts.Clock.Now()
	var out []Table
	for _, f := range r.opts.Families {
		entries, err := r.registry.List(ctx, f.Name)
		if errors.Is(err, storage.ErrTableNotFound) {
			// No meta table yet (a dry run on a new store): every
			// table is unregistered.
			entries, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list tables of family %q: %w", f.Name, err)
		}
		drift, err := r.registry.Compare(ctx, r.opts.Store, f, entries, now)
		if err != nil {
			return nil, err
		}
		why := map[string]Drift{}
		for _, e := range drift.Gone {
			why[e.Name] = Gone
		}
		for _, e := range drift.Settled {
			out = append(out, tableOf(e, Unsettled))
			why[e.Name] = Unsettled
		}
		for _, e := range entries {
			if !e.State.Live() {
				continue
			}
			if d, ok := why[e.Name]; ok {
				if d == Gone {
					out = append(out, tableOf(e, Gone))
				}
				continue
			}
			out = append(out, tableOf(e, ""))
		}
		for _, e := range drift.Unregistered {
			out = append(out, tableOf(e, Unregistered))
		}
	}
	return out, nil
}

// ensureMeta creates the meta table, which holds the registry and the
// lease, once per Reconciler; a dry run creates nothing.
func (r *Reconciler) ensureMeta(ctx context.Context, dryRun bool) error {
	r.mu.Lock()
	ready := r.mu.metaReady
	r.mu.Unlock()
	if ready {
		return nil
	}
	if dryRun {
		// A dry run creates nothing; without the meta table it plans
		// from an empty registry.
		return nil
	}
	if err := r.opts.Store.CreateTable(ctx, metatable.Spec(r.opts.MetaTable)); err != nil && !errors.Is(err, storage.ErrTableExists) {
		return fmt.Errorf("reconcile: create meta table %q: %w", r.opts.MetaTable, err)
	}
	r.mu.Lock()
	r.mu.metaReady = true
	r.mu.Unlock()
	return nil
}

func (r *Reconciler) family(name string) family.Family {
	for _, f := range r.opts.Families {
		if f.Name == name {
			return f
		}
	}
	return family.Family{}
}

// archiver returns the Archiver of a target and format, opening it on
// first use.
func (r *Reconciler) archiver(target string, format family.ArchiveFormat) (Archiver, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := archiverKey{target, format}
	if a, ok := r.mu.archivers[key]; ok {
		return a, nil
	}
	if r.opts.OpenArchiver == nil {
		return nil, fmt.Errorf("no archiver for %s in this build", target)
	}
	a, err := r.opts.OpenArchiver(target, format)
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", target, err)
	}
	r.mu.archivers[key] = a
	return a, nil
}

// archiverKey names an Archiver the Reconciler keeps: families may share
// a target in different formats.
type archiverKey struct {
	target string
	format family.ArchiveFormat
}

// apply carries out one action, and records it in the registry. Every
// action is idempotent: applying it again, or to a store that has it
// applied already, changes nothing.
func (r *Reconciler) apply(ctx context.Context, a Action) error {
	st := r.opts.Store
	now := r.opts.Clock.Now().UTC()
	e := a.Entry
	e.UpdatedAt = now
	switch a.Kind {
	case Register:
		_, err := r.registry.Register(ctx, e)
		if errors.Is(err, registry.ErrStale) {
			// Left creating, or adopted by another server meanwhile:
			// what the store says wins.
			_, err = r.registry.Save(ctx, e)
		}
		return err
	case Forget:
		// Not while another reconciler deletes the table, which it
		// records as deleted, with its archive, once it is gone.
		ctx, release, err := r.holdTable(ctx, a.Table)
		if err != nil {
			return err
		}
		defer release()
		// The listing the plan compared with may be older than the
		// entry it read (a table created in between): look again.
		if _, err := st.DescribeTable(ctx, a.Table); err == nil {
			return fmt.Errorf("forget table %q: the store has it now: %w", a.Table, registry.ErrStale)
		} else if !errors.Is(err, storage.ErrTableNotFound) {
			return err
		}
		e.State = registry.Missing
		_, err = r.registry.Save(ctx, e)
		return err
	case Create:
		_, err := r.registry.Create(ctx, st, a.Entry, now)
		return err
	case UpdateBilling, UpdateCapacity:
		c, pitr := a.Capacity, a.PITRDays
		err := st.UpdateTable(ctx, a.Table, storage.TableUpdate{Capacity: &c, PITRDays: &pitr, Tags: map[string]string{family.TagTier: a.Tier}})
		var skipped error
		if errors.Is(err, storage.ErrUnsupported) {
			// The store ignores table classes (DynamoDB Local): the rest
			// is applied, the class is recorded as ignored, and the
			// cycle goes on.
			skipped = fmt.Errorf("class %s not applied: %w", c.Normal().Class.Name(), errClassIgnored)
			r.warnClassIgnored(err)
			e.ClassIgnored = c.Normal().Class
			c.Class = e.Capacity.Normal().Class
		} else if err != nil {
			return err
		}
		if c.Normal().Class != e.Capacity.Normal().Class {
			e.RecordClassChange(now)
		}
		e.Tier, e.Capacity = a.Tier, c
		if _, err := r.registry.Save(ctx, e); err != nil {
			return err
		}
		return skipped
	case EnableTTL:
		if err := st.UpdateTable(ctx, a.Table, storage.TableUpdate{TTLAttribute: a.TTLAttribute}); err != nil {
			return err
		}
		e.TTLAttribute = a.TTLAttribute
		_, err := r.registry.Save(ctx, e)
		return err
	case Compact:
		return r.compact(ctx, a, now)
	case Archive:
		ctx, release, err := r.holdTable(ctx, a.Table)
		if err != nil {
			return err
		}
		defer release()
		if err := r.fence(ctx, &e, now); err != nil {
			return err
		}
		ar, err := r.archiver(a.Target, a.Format)
		if err != nil {
			return err
		}
		if e.State == registry.Archived {
			// Archived since the plan was made (by another reconciler):
			// exporting again would take its verified archive away
			// until the export ends.
			if ok, err := ar.Verified(ctx, a.Table); err != nil || ok {
				return err
			}
		}
		if err := ar.Archive(ctx, a.Table); err != nil {
			return err
		}
		// This cycle may have switched the table to on-demand for the
		// export: keep what the registry says now.
		if cur, err := r.registry.Get(ctx, a.Family, e.Ref.Period.Start, e.Name); err == nil && cur.Generation == e.Generation {
			e = cur
			e.UpdatedAt = now
		}
		e.State, e.ArchiveTarget, e.ArchivedAt = registry.Archived, a.Target, now
		_, err = r.registry.Save(ctx, e)
		return err
	case Delete:
		ctx, release, err := r.holdTable(ctx, a.Table)
		if err != nil {
			return err
		}
		defer release()
		if err := r.fence(ctx, &e, now); err != nil {
			return err
		}
		if a.Target != "" {
			// The plan saw a verified archive; look again right before
			// the one step that cannot be undone.
			ar, err := r.archiver(a.Target, a.Format)
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
			if err := recheck(ctx, ar, a.Table); err != nil {
				return err
			}
		}
		// Claim the deletion: the entry is written at the revision the
		// fence read, or not at all when another reconciler wrote it
		// since (deleted the table, say, after which a writer may have
		// made its next generation under the name, which this delete
		// would take with it).
		if e, err = r.registry.Save(ctx, e); err != nil {
			return fmt.Errorf("delete table %q: %w", a.Table, err)
		}
		// Only here, with the archive checked again, is deletion
		// protection lifted.
		off := false
		err = st.UpdateTable(ctx, a.Table, storage.TableUpdate{DeletionProtection: &off})
		if err == nil {
			err = r.deleteTable(ctx, a.Table)
		}
		if err != nil && !errors.Is(err, storage.ErrTableNotFound) {
			return err
		}
		if rw := e.Rewrite; rw != nil && rw.Table != a.Table {
			// A compaction's rewrite under way: its new table (or the
			// old one it replaced, still to drop) goes too.
			err = st.UpdateTable(ctx, rw.Table, storage.TableUpdate{DeletionProtection: &off})
			if err == nil {
				err = r.deleteTable(ctx, rw.Table)
			}
			if err != nil && !errors.Is(err, storage.ErrTableNotFound) {
				return err
			}
			e.Rewrite = nil
		}
		e.State = registry.Deleted
		_, err = r.registry.Save(ctx, e)
		return err
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}

// compact packs a table's events into chunks (package compact) under
// the table's lease: it fences the table and makes its entry's layout
// chunk (at the family's window) in one save, waits for the fence to
// settle, so that no writer writes to it and every reader decodes chunks,
// then compacts it from its checkpoint, stopping before the cycle's
// deadline (the next cycle resumes), and lifts the fence in the save
// that records it done.
func (r *Reconciler) compact(ctx context.Context, a Action, now time.Time) error {
	ctx, release, err := r.holdTable(ctx, a.Table)
	if err != nil {
		return err
	}
	defer release()
	e := a.Entry
	cur, err := r.registry.Get(ctx, e.Family(), e.Ref.Period.Start, e.Name)
	if err != nil {
		return fmt.Errorf("compact table %q: %w", e.Name, err)
	}
	if cur.Generation != e.Generation || cur.State != registry.Active {
		return fmt.Errorf("compact table %q: planned for generation %d, the registry has generation %d %s: %w",
			e.Name, e.Generation, cur.Generation, cur.State, registry.ErrStale)
	}
	e = cur
	if err := compact.Packable(e); err != nil {
		return err
	}
	opts := compact.Options{Unfence: true, Now: r.opts.Clock.Now, Method: r.opts.Compaction, Eventual: true, DropAfter: max(r.opts.FenceSettle, 0)}
	st, ok := r.opts.Store.(compact.Store)
	if !ok {
		return fmt.Errorf("compact table %q: the store cannot scan and delete items", e.Name)
	}
	if e.Rewrite != nil && e.Rewrite.Step == registry.RewriteDrop {
		// Switched to the new table, which takes writes: what is left
		// is deleting the old one.
		e, res, err := compact.Entry(ctx, st, r.registry, e, now, opts)
		r.opts.Logger.Info("lifecycle rewrote table", "table", e.Name, "into", e.TableName(), "dropped", res.Dropped, "drop pending", res.DropPending, "err", err)
		return err
	}
	if !e.Fenced() || e.ChunkWindow() == 0 {
		e = compact.AsChunks(e, r.family(a.Family).ChunkWindow)
		if !e.Fenced() {
			e.FencedAt = now
		}
		e.UpdatedAt = now
		if e, err = r.registry.Save(ctx, e); err != nil {
			return fmt.Errorf("compact table %q: fence: %w", e.Name, err)
		}
		r.opts.Logger.Info("lifecycle fenced table to compact it", "table", e.Name, "settle", r.opts.FenceSettle)
	}
	if left := r.opts.FenceSettle - now.Sub(e.FencedAt); left > 0 {
		return fmt.Errorf("table %q fenced %s, %v to go: %w", e.Name, e.FencedAt.Format(time.RFC3339), left, ErrFenceSettling)
	}
	e, res, err := compact.Entry(ctx, st, r.registry, e, now, opts)
	if errors.Is(err, compact.ErrVerify) {
		r.metrics.rewriteFailures.Inc()
		failures := 0
		if e.RewriteFailed != nil {
			failures = e.RewriteFailed.Count
		}
		r.opts.Logger.Error("lifecycle rewrite did not verify: the entry keeps its table, the copy is deleted", "table", e.Name,
			"failures", failures, "retry_at", res.RetryAt, "err", err)
		return err
	}
	r.opts.Logger.Info("lifecycle compacted table", "table", e.Name, "into", e.TableName(), "step", res.Step, "groups", res.Groups, "packed", res.Packed,
		"written", res.Written, "deleted", res.Deleted, "err", err)
	return err
}

// ErrTableBusy defers the archive or the delete of a table that another
// reconciler is archiving or deleting (it holds the table's lease).
var ErrTableBusy = errors.New("timetable: another reconciler is archiving or deleting the table")

// holdTable takes the lease of one table ("table#" and its name, by the
// Leaser, or by a TableLease in the meta table when there is none) for
// an archive or a delete, renewed as the cycle's is, so that of
// reconcilers acting at once without the cycle's lease (several
// `timetable reconcile` runs, or a server and a CLI) only one archives
// or deletes a table at a time: two exports of one table write over each
// other's files, and an export begun as another reconciler deletes the
// table takes its verified archive away. The returned context ends when
// the lease is lost; release gives it up. A table held by another
// reconciler fails with ErrTableBusy.
func (r *Reconciler) holdTable(ctx context.Context, table string) (context.Context, func(), error) {
	leaser := r.opts.Leaser
	if leaser == nil {
		leaser = TableLease{Store: r.opts.Store, Table: r.opts.MetaTable, Clock: r.opts.Clock}
	}
	name := "table#" + table
	held, err := leaser.Acquire(ctx, name, r.opts.Owner, r.opts.LeaseTTL)
	if err != nil {
		return nil, nil, fmt.Errorf("take the lease of table %q: %w", table, err)
	}
	if !held {
		return nil, nil, fmt.Errorf("table %q: %w", table, ErrTableBusy)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := r.renewLease(ctx, leaser, name, cancel)
	return ctx, func() {
		stop()
		cancel(nil)
		if err := leaser.Release(context.WithoutCancel(ctx), name, r.opts.Owner); err != nil {
			r.opts.Logger.Warn("lifecycle: release the lease of a table", "table", table, "err", err)
		}
	}, nil
}

// ErrFenceSettling defers the archive or the delete of a table fenced
// less than Options.FenceSettle ago: writers may not all have read the
// fence yet.
var ErrFenceSettling = errors.New("timetable: table fenced, waiting for the fence to settle")

// fence reads e's entry again, fences its table (registry.Entry.FencedAt)
// if it is not yet, and returns an error wrapping ErrFenceSettling until
// the fence has settled (Options.FenceSettle, by this reconciler's
// clock), so that no writer still writes to a table archived or
// deleted. It saves the fence in the registry, and in e. An entry that is
// no longer e's generation, or whose table is gone, fails with an error
// wrapping registry.ErrStale: the plan was made from an older registry
// (another reconciler acted meanwhile), and the table under the name now
// may be a next generation that writers fill, unfenced.
func (r *Reconciler) fence(ctx context.Context, e *registry.Entry, now time.Time) error {
	cur, err := r.registry.Get(ctx, e.Family(), e.Ref.Period.Start, e.Name)
	if err != nil {
		return fmt.Errorf("fence table %q: %w", e.Name, err)
	}
	if cur.Generation != e.Generation || !cur.State.Live() {
		return fmt.Errorf("fence table %q: planned for generation %d, the registry has generation %d %s: %w",
			e.Name, e.Generation, cur.Generation, cur.State, registry.ErrStale)
	}
	*e = cur
	e.UpdatedAt = now
	if !e.Fenced() {
		e.FencedAt = now
		saved, err := r.registry.Save(ctx, *e)
		if err != nil {
			return fmt.Errorf("fence table %q: %w", e.Name, err)
		}
		*e = saved
		r.opts.Logger.Info("lifecycle fenced table", "table", e.Name, "settle", r.opts.FenceSettle)
	}
	if left := r.opts.FenceSettle - now.Sub(e.FencedAt); left > 0 {
		return fmt.Errorf("table %q fenced %s, %v to go: %w", e.Name, e.FencedAt.Format(time.RFC3339), left, ErrFenceSettling)
	}
	return nil
}

// tableChecker is an Archiver that can also compare a table with its
// verified archive by scanning it (package archive's CheckTable): diff
// says what differs, "" when nothing does; err is a check that could not
// finish (stopped before its deadline, its progress kept for the next
// cycle, or failed).
type tableChecker interface {
	CheckTable(ctx context.Context, table string) (diff string, err error)
}

// recheck compares a table with its verified archive right before the
// table is deleted, when the archiver can: a write that landed after the
// export (a writer whose clock or cache lagged the fence) shows as a
// difference, and the table is archived again, then checked again,
// rather than deleted with an event its archive lacks. A check that
// does not finish (a Lambda's deadline, the scan throttled past its
// retries) fails the delete, which the next cycle plans again and whose
// check resumes where this one stopped: no table is deleted on a check
// that did not complete.
func recheck(ctx context.Context, ar Archiver, table string) error {
	c, ok := ar.(tableChecker)
	if !ok {
		return nil
	}
	diff, err := c.CheckTable(ctx, table)
	if err != nil {
		return fmt.Errorf("delete table %q: check it against its archive: %w", table, err)
	}
	if diff == "" {
		return nil
	}
	if err := ar.Archive(ctx, table); err != nil {
		return fmt.Errorf("delete table %q: the table changed after its archive (%s), and archiving it again failed: %w", table, diff, err)
	}
	diff, err = c.CheckTable(ctx, table)
	if err != nil {
		return fmt.Errorf("delete table %q: check it against its new archive: %w", table, err)
	}
	if diff != "" {
		return fmt.Errorf("delete table %q: the table differs from its archive: %s", table, diff)
	}
	return nil
}

// skewed drops from a plan the archives and deletes of tables not yet
// past their retention (or their restored table's end), and the
// compactions of tables not yet settled, by this clock less
// Options.ClockSkew: a reconciler whose clock is ahead of the
// writers' by up to that much does not take a table they still fill.
func (r *Reconciler) skewed(now time.Time, plan []Action) []Action {
	skew := max(r.opts.ClockSkew, 0)
	if skew == 0 {
		return plan
	}
	return slices.DeleteFunc(plan, func(a Action) bool {
		if a.Kind == Compact {
			// Not fenced while the writers' clocks may still route
			// events of now to it.
			return !a.Entry.Fenced() && !a.Entry.Settled(now.Add(-skew))
		}
		if a.Kind != Archive && a.Kind != Delete {
			return false
		}
		exp := r.family(a.Family).ExpiresAt(a.Ref)
		if a.Entry.State == registry.Restored {
			exp = a.Entry.RestoredUntil
		}
		return !exp.IsZero() && now.Add(-skew).Before(exp)
	})
}

// deleteTable deletes a table, waiting for it to be gone at most
// Options.DeleteWait and never past the cycle's deadline (ctx's). A table
// still deleting when the wait ends counts as deleted: DynamoDB accepted
// the delete and finishes it, and the writers, fenced, make no table of
// the name until the registry says it is deleted.
func (r *Reconciler) deleteTable(ctx context.Context, table string) error {
	wctx, cancel := context.WithTimeout(ctx, r.opts.DeleteWait)
	defer cancel()
	err := r.opts.Store.DeleteTable(wctx, table)
	if err == nil || errors.Is(err, storage.ErrTableNotFound) {
		return nil
	}
	if wctx.Err() == nil {
		return err
	}
	info, derr := r.opts.Store.DescribeTable(context.WithoutCancel(ctx), table)
	if errors.Is(derr, storage.ErrTableNotFound) || derr == nil && info.Status == storage.StatusDeleting {
		r.opts.Logger.Warn("lifecycle: table still deleting when the wait ended", "table", table, "wait", r.opts.DeleteWait)
		return nil
	}
	return err
}
