package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// TableStatus describes one physical table.
type TableStatus struct {
	Name          string
	Family        string
	PeriodStart   time.Time
	PeriodEnd     time.Time
	WriteMonth    string // "YYYY-MM", or "" without write-time grouping
	Tier          string
	Status        string
	Billing       string
	ReadCapacity  int64
	WriteCapacity int64
	ItemCount     int64 // -1 when the store does not know
}

// Tables lists the physical tables of every family, in family order and
// then period order, as the store describes them now.
func (db *DB) Tables(ctx context.Context) ([]TableStatus, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	var out []TableStatus
	for _, f := range db.opts.Config.Families {
		if err := db.catalog.refresh(ctx, f); err != nil {
			return nil, err
		}
		ts, err := db.catalog.tables(ctx, f, time.Unix(0, 0).UTC(), time.Unix(1<<40, 0).UTC(), time.Hour)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			info, err := db.store.DescribeTable(ctx, t.name)
			if errors.Is(err, storage.ErrTableNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("describe table %q: %w", t.name, err)
			}
			out = append(out, statusOf(f, t, info))
		}
	}
	return out, nil
}

func statusOf(f family.Family, t physTable, info storage.TableInfo) TableStatus {
	s := TableStatus{
		Name:          t.name,
		Family:        f.Name,
		PeriodStart:   t.ref.Period.Start,
		PeriodEnd:     t.ref.Period.End,
		Tier:          info.Tags[family.TagTier],
		Status:        string(info.Status),
		Billing:       string(info.Capacity.Billing),
		ReadCapacity:  info.Capacity.Read,
		WriteCapacity: info.Capacity.Write,
		ItemCount:     info.ItemCount,
	}
	if !t.ref.WriteMonth.IsZero() {
		s.WriteMonth = t.ref.WriteMonth.String()
	}
	return s
}
