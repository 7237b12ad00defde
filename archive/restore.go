package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// ErrLiveTable marks a restore into a table that is live: the registry
// has it creating, active or archived and not yet deleted, and the store
// has it, with items of its own that a restore would merge with the
// archive's. Restore it under another name instead.
var ErrLiveTable = errors.New("timetable: the table is live")

// refuseLive returns an error wrapping ErrLiveTable when into is a live
// table (ErrLiveTable). Without a registry (Options.Facts), or for a table
// the registry has deleted, missing or restored (a restore run again)
// the restore goes on.
func (a *Archiver) refuseLive(ctx context.Context, table, into string) error {
	if a.opts.Facts == nil {
		return nil
	}
	e, found, err := a.opts.Facts(ctx, into)
	if err != nil {
		return fmt.Errorf("restore %q into %q: registry entry: %w", table, into, err)
	}
	if !found || (e.State != registry.Creating && e.State != registry.Active && e.State != registry.Archived) {
		return nil
	}
	_, err = a.store.DescribeTable(ctx, into)
	if errors.Is(err, storage.ErrTableNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore %q into %q: %w", table, into, err)
	}
	return fmt.Errorf("%w: restore %q into %q: %q is %s, with items of its own, and a restore never merges into a live table; restore it under another name (timetable archive restore --into NEWNAME)",
		ErrLiveTable, table, into, into, e.State)
}

// Restore writes the items of table's archives back into the table named
// into (table itself when into is empty), which must not be live
// (ErrLiveTable), creating it with the archived
// table's tags, so that the engine's catalog recognizes it and queries see
// its events again. Every generation's archive is restored, oldest first:
// the tables once made under one name held events of one period. Each
// archive is read twice: first checked whole against its manifest, so
// that nothing is written from a damaged archive, then written. Items
// replace those of the same key, so a restore that was interrupted can
// simply be run again.
//
// The table is created with Options.RestoreCapacity (on-demand by default),
// deletion protection and point-in-time recovery (restoreSpec), and
// without TTL, and the items' TTL attribute (family.TTLAttribute) is
// removed, so that DynamoDB does not delete restored items whose expiry
// is past. A single archive restored into a table that does not exist is
// imported by the store itself where Options.Method allows it and the
// store has an import from S3 (DynamoDB's ImportTable, which consumes no
// write capacity): the import keeps the items as archived, TTL attribute
// included, in a table made without TTL, which therefore deletes none of
// them; the import's count of items written must equal the manifest's. Registering the table as restored, so that the lifecycle
// manager keeps it for a while, is the caller's (registry.MarkRestored;
// `timetable archive restore --keep`).
//
// With a deadline, Restore stops Options.DeadlineMargin before it, saves
// how far it got ({table}/restore-{into}.checkpoint.json) and returns an
// error wrapping ErrStopped; the next Restore of the same archive into
// the same table goes on from there, without checking the archives
// again. Stopped before its first write (while it checks the archives or
// makes the table), it saves nothing and the next Restore starts over.
func (a *Archiver) Restore(ctx context.Context, table, into string) error {
	if into == "" {
		into = table
	}
	if err := checkTableName(into); err != nil {
		return err
	}
	if err := a.refuseLive(ctx, table, into); err != nil {
		return err
	}
	ctx, cancel := a.withDeadline(ctx)
	defer cancel()
	ms, err := a.manifests(ctx, table)
	if err != nil {
		return fmt.Errorf("restore %q: %w", table, err)
	}
	cp, resumed, err := a.loadRestoreCheckpoint(ctx, table, into, ms)
	if err != nil {
		return fmt.Errorf("restore %q: %w", table, err)
	}
	if !resumed {
		for _, m := range ms {
			got, err := a.readBack(ctx, m, nil)
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("restore %q into %q: stopped while its archive was checked, before anything was written: %w: %w", table, into, ErrStopped, errors.Join(err, ctx.Err()))
			}
			if err != nil {
				return fmt.Errorf("restore %q: %w", table, err)
			}
			if err := compare("manifest", m, got); err != nil {
				return fmt.Errorf("restore %q: %w", table, err)
			}
		}
		// One archive into a table not there yet: the store's own import
		// from S3, where it has one, makes and fills the table without
		// consuming its capacity.
		if len(ms) == 1 {
			_, err := a.store.DescribeTable(ctx, into)
			if errors.Is(err, storage.ErrTableNotFound) {
				ok, err := a.restoreNative(ctx, ms[0], into)
				if err != nil {
					return fmt.Errorf("restore %q into %q: %w", table, into, err)
				}
				if ok {
					a.opts.Logger.Info("restored table by the store's import", "table", table, "into", into, "items", ms[0].ItemCount)
					return nil
				}
			}
		}
		spec := a.restoreSpec(into, ms[len(ms)-1].Tags)
		if err := a.store.CreateTable(ctx, spec); err != nil && !errors.Is(err, storage.ErrTableExists) {
			if ctx.Err() != nil {
				return fmt.Errorf("restore %q into %q: stopped while its table was made, before anything was written: %w: %w", table, into, ErrStopped, errors.Join(err, ctx.Err()))
			}
			return fmt.Errorf("restore %q into %q: %w", table, into, err)
		}
		cp = restoreCheckpoint{Into: into, Manifests: manifestStamps(ms)}
	}
	batch := make([]storage.Item, 0, a.opts.RestoreBatch)
	var skip int64 // items of the current generation written before
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := a.store.BatchWrite(ctx, into, batch); err != nil {
			return err
		}
		a.opts.Progress(len(batch))
		cp.Items += int64(len(batch))
		batch = batch[:0]
		return nil
	}
	var items int64
	for g, m := range ms {
		if g < cp.Generation {
			continue
		}
		if g > cp.Generation {
			cp.Generation, cp.Items = g, 0
		}
		skip = cp.Items
		_, err = a.readBack(ctx, m, func(it storage.Item) error {
			if skip > 0 {
				skip--
				return nil
			}
			// The items' expiry stamps are in the past: a table with TTL
			// enabled would lose them again.
			delete(it.Attrs, family.TTLAttribute)
			batch = append(batch, it)
			if len(batch) == cap(batch) {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			if ctx.Err() != nil {
				batch = batch[:0]
				if serr := a.saveRestoreCheckpoint(ctx, table, cp); serr != nil {
					return fmt.Errorf("restore %q into %q: %w (and its checkpoint was not saved: %v)", table, into, err, serr)
				}
				return fmt.Errorf("restore %q into %q: stopped, to go on from item %d of generation %d: %w: %w",
					table, into, cp.Items, ms[cp.Generation].generation(), ErrStopped, errors.Join(err, ctx.Err()))
			}
			return fmt.Errorf("restore %q into %q: %w", table, into, err)
		}
		items += m.ItemCount
	}
	if err := a.target.del(ctx, restoreCheckpointKey(table, into)); err != nil {
		a.opts.Logger.Warn("restore checkpoint not removed", "table", table, "into", into, "err", err)
	}
	a.opts.Logger.Info("restored table", "table", table, "into", into, "generations", len(ms), "items", items)
	return nil
}

// restoreCheckpoint is how far a stopped Restore got.
type restoreCheckpoint struct {
	Into string `json:"into"`
	// Manifests are the creation times of the archives restored, which
	// a checkpoint holds for: another archive made since starts over.
	Manifests []time.Time `json:"manifests"`
	// Generation is the index in Manifests of the archive being
	// restored, Items how many of its items were written.
	Generation int   `json:"generation"`
	Items      int64 `json:"items"`
}

func manifestStamps(ms []Manifest) []time.Time {
	out := make([]time.Time, len(ms))
	for i, m := range ms {
		out[i] = m.CreatedAt
	}
	return out
}

func restoreCheckpointKey(table, into string) string {
	return table + "/restore-" + into + ".checkpoint.json"
}

// loadRestoreCheckpoint returns the checkpoint of a stopped restore of
// the archives ms into into, if there is one that holds for them.
func (a *Archiver) loadRestoreCheckpoint(ctx context.Context, table, into string, ms []Manifest) (restoreCheckpoint, bool, error) {
	r, err := a.target.get(ctx, restoreCheckpointKey(table, into))
	if errors.Is(err, ErrNotFound) {
		return restoreCheckpoint{}, false, nil
	}
	if err != nil {
		return restoreCheckpoint{}, false, err
	}
	defer r.Close()
	var cp restoreCheckpoint
	err = json.NewDecoder(r).Decode(&cp)
	if err != nil || cp.Into != into || !slices.EqualFunc(cp.Manifests, manifestStamps(ms), time.Time.Equal) ||
		cp.Generation < 0 || cp.Generation >= len(ms) || cp.Items < 0 {
		a.opts.Logger.Warn("restore checkpoint ignored", "table", table, "into", into, "err", err)
		return restoreCheckpoint{}, false, nil
	}
	a.opts.Progress(int(cp.Items))
	return cp, true, nil
}

// saveRestoreCheckpoint stores cp; it runs after ctx's deadline too.
func (a *Archiver) saveRestoreCheckpoint(ctx context.Context, table string, cp restoreCheckpoint) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
	defer cancel()
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return a.target.put(ctx, restoreCheckpointKey(table, cp.Into), strings.NewReader(string(b)), int64(len(b)))
}

// manifests returns the manifests of table's archives, oldest
// generation first, or an error wrapping ErrNotFound when it has none.
// It looks for generations 1 to the registry's current one, each under
// the physical table it was archived from (generations).
func (a *Archiver) manifests(ctx context.Context, table string) ([]Manifest, error) {
	if err := checkTableName(table); err != nil {
		return nil, err
	}
	gs, err := a.generations(ctx, table)
	if err != nil {
		return nil, err
	}
	var ms []Manifest
	for _, g := range gs {
		m, err := a.readManifest(ctx, manifestKey(g.table, g.generation))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%w: no archive of %q", ErrNotFound, table)
	}
	return ms, nil
}

// restorePITRDays is the point-in-time recovery period of a restored
// table: DynamoDB's longest, as its price is the table's size whatever
// the period.
const restorePITRDays = 35

// restoreSpec returns the specification of the table a restore makes,
// by CreateTable or by the store's import alike: Options.RestoreCapacity,
// the archived table's tags, and deletion protection and point-in-time
// recovery, as every table timetable makes has, for a restored table may
// hold the only live copy of what an operator needed back.
func (a *Archiver) restoreSpec(into string, tags map[string]string) storage.TableSpec {
	return storage.TableSpec{Name: into, Capacity: a.opts.RestoreCapacity, Tags: tags, DeletionProtection: true, PITRDays: restorePITRDays}
}
