package api

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// LogicalTable is a logical table as GET /v1/tables answers it.
type LogicalTable struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	// Created is when the tenant first wrote the table, absent when the
	// store does not know.
	Created time.Time `json:"created,omitzero"`
	// First and Last are the times of the earliest and latest events
	// written, absent when the table has not been written since
	// timetable began to record them.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
}

// LogicalTables is the answer of GET /v1/tables: the tenant's logical
// tables, in name order.
type LogicalTables struct {
	Tables []LogicalTable `json:"tables"`
}

// SeriesQuery is a request of GET /v1/tables/{table}/series: its
// parameters, as Values writes them.
type SeriesQuery struct {
	// Prefix keeps the series that start with it.
	Prefix string
	// Limit bounds the page (0: the server's default).
	Limit int
	// Cursor is the NextCursor of the page before.
	Cursor string
}

// Values returns the query's parameters.
func (q SeriesQuery) Values() url.Values {
	p := url.Values{}
	set(p, "prefix", q.Prefix)
	if q.Limit > 0 {
		p.Set("limit", strconv.Itoa(q.Limit))
	}
	set(p, "cursor", q.Cursor)
	return p
}

// SeriesPage is the answer of GET /v1/tables/{table}/series: a page of a
// table's series, in bytewise order.
type SeriesPage struct {
	Series []string `json:"series"`
	// NextCursor, absent on the last page, asks for the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// TableStatus describes one physical table: its registry entry and what
// the store says of it now. The engine lists tables as it
// (engine.TableStatus is this type), the admin API answers them, and
// `timetable tables --format json` prints them, all with its MarshalJSON.
type TableStatus struct {
	Name string
	// Physical is the store's table that holds the table's events: Name,
	// or the table a compaction rewrote it into (Name and ".r1", ".r2"...;
	// registry Entry.TableName); for a table archived and deleted, the
	// table its archive was made of, under whose name the archive is kept.
	Physical    string
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
	// IDScheme is the table's event id scheme (1: 22-character ids, 2:
	// 11-character ids; package event's IDScheme), which its events
	// without a client id keep for good.
	IDScheme int
	// Tier is the tier last applied; TierReason why the table should have
	// the tier it should have now (the lifecycle moves it there).
	Tier          string
	TierReason    string
	Status        string // the store's status, "" when the table is gone
	Billing       string
	ReadCapacity  int64
	WriteCapacity int64
	// Class is the table class ("STANDARD" or
	// "STANDARD_INFREQUENT_ACCESS"); ClassChanges when it was changed in
	// the last 30 days, of the two DynamoDB allows in that window.
	Class        string
	ClassChanges []time.Time
	ItemCount    int64 // -1 when the store does not know
	CreatedAt    time.Time
	// Source says how the table came into the registry.
	Source string
	// CreateError is why the last attempt to create the table failed
	// (the account's table quota...), "" once it exists.
	CreateError string
	// Drift is why the store's description of the table disagrees with
	// its registry entry (capacity changed outside timetable, which the
	// lifecycle puts back), "" when they agree.
	Drift string
	// ArchiveTarget and ArchivedAt say where and when the table was
	// archived ("file://DIR", "s3://bucket/prefix"); "" and zero for a
	// table never archived.
	ArchiveTarget string
	ArchivedAt    time.Time
	// RewriteFailed says, for a table whose last rewrites into its next
	// physical table did not verify, how many failed, when and why, and
	// when the next may start; "" when none failed since the last that
	// verified.
	RewriteFailed string
}

// tableJSON is a TableStatus as JSON.
type tableJSON struct {
	Name          string   `json:"name"`
	Physical      string   `json:"physical,omitempty"`
	Family        string   `json:"family"`
	PeriodStart   string   `json:"period_start"`
	PeriodEnd     string   `json:"period_end"`
	WriteMonth    *string  `json:"write_month"`
	Tier          string   `json:"tier"`
	Why           string   `json:"why"`
	State         string   `json:"state"`
	Generation    int64    `json:"generation"`
	Shards        int      `json:"shards"`
	Layout        string   `json:"layout"`
	IDScheme      int      `json:"id_scheme"`
	CreatedAt     string   `json:"created_at"`
	Source        string   `json:"source"`
	Status        string   `json:"status"`
	Billing       string   `json:"billing"`
	ReadCapacity  int64    `json:"read_capacity"`
	WriteCapacity int64    `json:"write_capacity"`
	Class         string   `json:"class,omitempty"`
	ClassChanges  []string `json:"class_changes,omitempty"`
	ItemCount     *int64   `json:"item_count"`
	CreateError   string   `json:"create_error,omitempty"`
	Drift         string   `json:"drift,omitempty"`
	ArchiveTarget string   `json:"archive_target,omitempty"`
	ArchivedAt    string   `json:"archived_at,omitempty"`
	RewriteFailed string   `json:"rewrite_failed,omitempty"`
}

// MarshalJSON writes the table's status with times in RFC 3339, a
// write month and an item count the store does not know as null.
func (s TableStatus) MarshalJSON() ([]byte, error) {
	j := tableJSON{
		Name:          s.Name,
		Physical:      s.Physical,
		Family:        s.Family,
		PeriodStart:   s.PeriodStart.UTC().Format(time.RFC3339),
		PeriodEnd:     s.PeriodEnd.UTC().Format(time.RFC3339),
		Tier:          s.Tier,
		Why:           s.TierReason,
		State:         s.State,
		Generation:    s.Generation,
		Shards:        s.Shards,
		Layout:        s.Layout,
		IDScheme:      s.IDScheme,
		Source:        s.Source,
		Status:        s.Status,
		Billing:       s.Billing,
		ReadCapacity:  s.ReadCapacity,
		WriteCapacity: s.WriteCapacity,
		Class:         s.Class,
		CreateError:   s.CreateError,
		Drift:         s.Drift,
		ArchiveTarget: s.ArchiveTarget,
		RewriteFailed: s.RewriteFailed,
	}
	if !s.ArchivedAt.IsZero() {
		j.ArchivedAt = s.ArchivedAt.UTC().Format(time.RFC3339)
	}
	for _, t := range s.ClassChanges {
		j.ClassChanges = append(j.ClassChanges, t.UTC().Format(time.RFC3339))
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
		Name: j.Name, Physical: j.Physical, Family: j.Family, Tier: j.Tier, TierReason: j.Why, State: j.State,
		Generation: j.Generation, Shards: j.Shards, Layout: j.Layout, IDScheme: j.IDScheme, Source: j.Source, Status: j.Status,
		Billing: j.Billing, ReadCapacity: j.ReadCapacity, WriteCapacity: j.WriteCapacity, Class: j.Class,
		CreateError: j.CreateError, Drift: j.Drift, ItemCount: -1, ArchiveTarget: j.ArchiveTarget, RewriteFailed: j.RewriteFailed,
	}
	for _, c := range j.ClassChanges {
		t, err := time.Parse(time.RFC3339, c)
		if err != nil {
			return fmt.Errorf("table %q: class_changes: %w", j.Name, err)
		}
		s.ClassChanges = append(s.ClassChanges, t)
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
	if j.ArchivedAt != "" {
		if s.ArchivedAt, err = time.Parse(time.RFC3339, j.ArchivedAt); err != nil {
			return fmt.Errorf("table %q: archived_at: %w", j.Name, err)
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

// PhysicalTables is the answer of GET /v1/admin/tables: the registry's
// physical tables, in family order and then period order.
type PhysicalTables struct {
	// Store is the kind of store the server runs on, "pebble" or
	// "dynamodb"; empty when the server does not say.
	Store  string        `json:"store,omitempty"`
	Tables []TableStatus `json:"tables"`
}
