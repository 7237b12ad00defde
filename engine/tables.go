package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TableStatus describes one physical table: its registry entry and what
// the store says of it now.
type TableStatus struct {
	Name        string
	Family      string
	PeriodStart time.Time
	PeriodEnd   time.Time
	WriteMonth  string // "YYYY-MM", or "" without write-time grouping
	// State is the registry's state of the table (active, archived,
	// missing...), Generation how many tables were made under its name.
	State      string
	Generation int64
	Shards     int
	Layout     string
	// Tier is the tier last applied; TierReason why the table should have
	// the tier it should have now (the lifecycle moves it there).
	Tier          string
	TierReason    string
	Status        string // the store's status, "" when the table is gone
	Billing       string
	ReadCapacity  int64
	WriteCapacity int64
	ItemCount     int64 // -1 when the store does not know
	CreatedAt     time.Time
	// Source says how the table came into the registry.
	Source string
	// CreateError is why the last attempt to create the table failed
	// (the account's table quota...), "" once it exists.
	CreateError string
}

// Tables lists the physical tables of every family from the table
// registry, in family order and then period order, with what the store
// says of each now (one DescribeTable per table). Tables timetable deleted
// are left out.
func (db *DB) Tables(ctx context.Context) ([]TableStatus, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	now := db.opts.Clock.Now()
	var out []TableStatus
	for _, f := range db.opts.Config.Families {
		entries, err := db.registry.List(ctx, f.Name)
		if err != nil {
			return nil, err
		}
		db.catalog.mu.RLock()
		for _, t := range db.catalog.mu.adopted[f.Name] {
			entries = append(entries, t.entry)
		}
		db.catalog.mu.RUnlock()
		for _, e := range entries {
			if e.State == registry.Deleted {
				continue
			}
			s := statusOf(e, now)
			info, err := db.store.DescribeTable(ctx, e.Name)
			switch {
			case errors.Is(err, storage.ErrTableNotFound):
				s.ItemCount = -1
			case err != nil:
				return nil, fmt.Errorf("describe table %q: %w", e.Name, err)
			default:
				s.Status = string(info.Status)
				s.ItemCount = info.ItemCount
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
		Family:        e.Family(),
		PeriodStart:   e.Ref.Period.Start,
		PeriodEnd:     e.Ref.Period.End,
		State:         string(e.State),
		Generation:    e.Generation,
		Shards:        e.Shards(),
		Layout:        string(e.Policy.Layout),
		Tier:          e.Tier,
		TierReason:    reason,
		Billing:       string(e.Capacity.Billing),
		ReadCapacity:  e.Capacity.Read,
		WriteCapacity: e.Capacity.Write,
		CreatedAt:     e.CreatedAt,
		Source:        e.Source,
		CreateError:   e.CreateError,
	}
	if !e.Ref.WriteMonth.IsZero() {
		s.WriteMonth = e.Ref.WriteMonth.String()
	}
	return s
}

// tableJSON is a TableStatus as JSON: as `timetable tables --format json`
// writes it and the admin API answers it.
type tableJSON struct {
	Name          string  `json:"name"`
	Family        string  `json:"family"`
	PeriodStart   string  `json:"period_start"`
	PeriodEnd     string  `json:"period_end"`
	WriteMonth    *string `json:"write_month"`
	Tier          string  `json:"tier"`
	Why           string  `json:"why"`
	State         string  `json:"state"`
	Generation    int64   `json:"generation"`
	Shards        int     `json:"shards"`
	Layout        string  `json:"layout"`
	CreatedAt     string  `json:"created_at"`
	Source        string  `json:"source"`
	Status        string  `json:"status"`
	Billing       string  `json:"billing"`
	ReadCapacity  int64   `json:"read_capacity"`
	WriteCapacity int64   `json:"write_capacity"`
	ItemCount     *int64  `json:"item_count"`
	CreateError   string  `json:"create_error,omitempty"`
}

// MarshalJSON writes the table's status with times in RFC 3339, a
// write month and an item count the store does not know as null.
func (s TableStatus) MarshalJSON() ([]byte, error) {
	j := tableJSON{
		Name:          s.Name,
		Family:        s.Family,
		PeriodStart:   s.PeriodStart.UTC().Format(time.RFC3339),
		PeriodEnd:     s.PeriodEnd.UTC().Format(time.RFC3339),
		Tier:          s.Tier,
		Why:           s.TierReason,
		State:         s.State,
		Generation:    s.Generation,
		Shards:        s.Shards,
		Layout:        s.Layout,
		Source:        s.Source,
		Status:        s.Status,
		Billing:       s.Billing,
		ReadCapacity:  s.ReadCapacity,
		WriteCapacity: s.WriteCapacity,
		CreateError:   s.CreateError,
	}
	if s.WriteMonth != "" {
		j.WriteMonth = &s.WriteMonth
	}
	if !s.CreatedAt.IsZero() {
		j.CreatedAt = s.CreatedAt.UTC().Format(time.RFC3339)
	}
	if s.ItemCount >= 0 {
		j.ItemCount = &s.ItemCount
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *TableStatus) UnmarshalJSON(b []byte) error {
	var j tableJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = TableStatus{
		Name: j.Name, Family: j.Family, Tier: j.Tier, TierReason: j.Why, State: j.State,
		Generation: j.Generation, Shards: j.Shards, Layout: j.Layout, Source: j.Source, Status: j.Status,
		Billing: j.Billing, ReadCapacity: j.ReadCapacity, WriteCapacity: j.WriteCapacity, CreateError: j.CreateError, ItemCount: -1,
	}
	var err error
	if s.PeriodStart, err = time.Parse(time.RFC3339, j.PeriodStart); err != nil {
		return fmt.Errorf("table %q: period_start: %w", j.Name, err)
	}
	if s.PeriodEnd, err = time.Parse(time.RFC3339, j.PeriodEnd); err != nil {
		return fmt.Errorf("table %q: period_end: %w", j.Name, err)
	}
	if j.CreatedAt != "" {
		if s.CreatedAt, err = time.Parse(time.RFC3339, j.CreatedAt); err != nil {
			return fmt.Errorf("table %q: created_at: %w", j.Name, err)
		}
	}
	if j.WriteMonth != nil {
		s.WriteMonth = *j.WriteMonth
	}
	if j.ItemCount != nil {
		s.ItemCount = *j.ItemCount
	}
	return nil
}
