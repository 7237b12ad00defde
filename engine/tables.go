package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TableStatus describes one physical table: its registry entry and what
// the store says of it now, as the HTTP API answers it.
type TableStatus = api.TableStatus

// Tables lists the physical tables of every family from the table
// registry, in family order and then period order, with what the store
// says of each now (one DescribeTable per table). A table timetable
// archived and deleted is listed (state deleted, its archive's target, no
// status and no item count), and so is each earlier generation of a
// table archived before the table was made again under its name
// (registry.Entry.PastArchives), before it: their periods are read from
// their archives. Tables deleted without an archive are left out.
func (db *DB) Tables(ctx context.Context) ([]TableStatus, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	now := db.opts.Clock.Now()
	var out []TableStatus
	for _, f := range db.opts.Schema.Families {
		entries, err := db.registry.List(ctx, f.Name)
		if err != nil {
			return nil, err
		}
		db.catalog.mu.RLock()
		for _, t := range db.catalog.mu.adopted[f.Name] {
			entries = append(entries, *t.entry)
		}
		db.catalog.mu.RUnlock()
		for _, e := range entries {
			for _, a := range e.PastArchives {
				out = append(out, pastArchiveStatus(e, a))
			}
			if e.State == registry.Deleted {
				if e.ArchiveTarget != "" {
					out = append(out, archivedStatus(e, now))
				}
				continue
			}
			s := statusOf(e, now)
			info, err := db.store.DescribeTable(ctx, e.TableName())
			switch {
			case errors.Is(err, storage.ErrTableNotFound):
				s.ItemCount = -1
			case err != nil:
				return nil, fmt.Errorf("describe table %q: %w", e.TableName(), err)
			default:
				s.Status = string(info.Status)
				s.ItemCount = info.ItemCount
				s.Drift = registry.CapacityDrift(e, info)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func statusOf(e registry.Entry, now time.Time) TableStatus {
	_, reason := e.Policy.TierFor(e.Ref, e.CreatedAt, now)
	if e.State == registry.Restored {
		reason = "restored from its archive, kept until " + e.RestoredUntil.UTC().Format(time.RFC3339)
	}
	s := TableStatus{
		Name:          e.Name,
		Physical:      e.TableName(),
		Family:        e.Family(),
		PeriodStart:   e.Ref.Period.Start,
		PeriodEnd:     e.Ref.Period.End,
		State:         string(e.State),
		Generation:    e.Generation,
		Shards:        e.Shards(),
		Layout:        string(e.Policy.Layout),
		IDScheme:      int(e.IDScheme()),
		Tier:          e.Tier,
		TierReason:    reason,
		Billing:       string(e.Capacity.Billing),
		ReadCapacity:  e.Capacity.Read,
		WriteCapacity: e.Capacity.Write,
		Class:         string(e.Capacity.Normal().Class),
		ClassChanges:  e.ClassChanges,
		CreatedAt:     e.CreatedAt,
		Source:        e.Source,
		CreateError:   e.CreateError,
		ArchiveTarget: e.ArchiveTarget,
		ArchivedAt:    e.ArchivedAt,
	}
	if !e.Ref.WriteMonth.IsZero() {
		s.WriteMonth = e.Ref.WriteMonth.String()
	}
	if f := e.RewriteFailed; f != nil {
		s.RewriteFailed = fmt.Sprintf("%d rewrites into %s did not verify, the last at %s (%s); the next from %s",
			f.Count, f.Table, f.At.UTC().Format(time.RFC3339), f.Reason, f.RetryAt.UTC().Format(time.RFC3339))
	}
	return s
}

// archivedStatus is the status of a table archived and deleted: gone from
// the store, its period read from its archive.
func archivedStatus(e registry.Entry, now time.Time) TableStatus {
	s := statusOf(e, now)
	s.ItemCount = -1
	s.TierReason = "archived to " + e.ArchiveTarget + " and deleted: its period is read from its archive"
	return s
}

// pastArchiveStatus is the status of an earlier generation of e's table,
// archived to a's target and deleted before the table was made again: e's
// period, and the shards and layout the engine reads its archive with
// (pastTables), but none of the facts of e's own table (tier, capacity,
// class, when it was made).
func pastArchiveStatus(e registry.Entry, a registry.PastArchive) TableStatus {
	s := TableStatus{
		Name:          e.Name,
		Physical:      a.TableName(e.Name),
		Family:        e.Family(),
		PeriodStart:   e.Ref.Period.Start,
		PeriodEnd:     e.Ref.Period.End,
		State:         string(registry.Deleted),
		Generation:    a.Generation,
		Shards:        e.Shards(),
		Layout:        string(e.Policy.Layout),
		IDScheme:      int(e.IDScheme()),
		TierReason:    fmt.Sprintf("generation %d, archived to %s and deleted: its period is read from its archive", a.Generation, a.Target),
		ItemCount:     -1,
		Source:        e.Source,
		ArchiveTarget: a.Target,
	}
	if !e.Ref.WriteMonth.IsZero() {
		s.WriteMonth = e.Ref.WriteMonth.String()
	}
	return s
}
