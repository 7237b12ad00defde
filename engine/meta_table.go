package engine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// metaTable is the engine's view of the meta table: the registry of logical
// tables and the key that signs cursors. Tenants are kept there too, by
// package tenant.
type metaTable struct {
	store storage.Store
	table string
	// secret signs cursors. It is made once per meta table and shared by
	// every server on it, so a cursor from one server works on another.
	secret []byte

	// clock tells when a logical table found by a read stops being
	// trusted to exist (tableSeenTTL).
	clock clock.Clock

	mu struct {
		sync.Mutex
		// ranges caches the logical tables known to exist, by tenant
		// and name, with the range of event times known recorded.
		ranges map[string]timeRange
		// seen holds the logical tables a read found to exist, by tenant
		// and name, with the time until which they are trusted to.
		seen map[string]time.Time
	}
}

// tableSeenTTL is how long a server trusts that a logical table a read
// found exists, so that the queries of a server that does not write the
// table (a reader, or one restarted) cost no read of the meta table each.
// A logical table is deleted only with its tenant's data (DB.DeleteTenantData):
// another server answers queries of it as of a table with no events, not
// with ErrUnknownTable, for at most this long after (and its tenant's keys,
// revoked first, stop working there within the key cache's TTL). A table
// found missing is not remembered: one another server makes is found by
// the next query.
const tableSeenTTL = 5 * time.Second

// openMetaTable opens the meta table, creating it unless readOnly.
func openMetaTable(ctx context.Context, store storage.Store, table string, readOnly bool, clk clock.Clock) (*metaTable, error) {
	if readOnly {
		if _, err := store.DescribeTable(ctx, table); errors.Is(err, storage.ErrTableNotFound) {
			return nil, fmt.Errorf("%w: %q", ErrNoMetaTable, table)
		} else if err != nil {
			return nil, fmt.Errorf("open meta table %q: %w", table, err)
		}
	} else {
		if err := store.CreateTable(ctx, metatable.Spec(table)); err != nil && !errors.Is(err, storage.ErrTableExists) {
			return nil, fmt.Errorf("create meta table %q: %w", table, err)
		}
	}
	m := &metaTable{store: store, table: table, clock: clk}
	m.mu.ranges = map[string]timeRange{}
	m.mu.seen = map[string]time.Time{}
	secret, err := m.loadSecret(ctx, readOnly)
	if err != nil {
		return nil, err
	}
	m.secret = secret
	return m, nil
}

// loadSecret reads the cursor key, making it on first use. Two servers
// starting at once on a new meta table may both make one; the one written
// last wins, and the first reads it back below.
func (m *metaTable) loadSecret(ctx context.Context, readOnly bool) ([]byte, error) {
	secretPK, secretSK := metatable.Secret()
	item, err := m.store.GetItem(ctx, m.table, secretPK, secretSK)
	if err == nil {
		if b, ok := item.Attrs["key"].([]byte); ok && len(b) == 32 {
			return b, nil
		}
		return nil, fmt.Errorf("meta table %q: cursor key is damaged", m.table)
	}
	if !errors.Is(err, storage.ErrItemNotFound) {
		return nil, fmt.Errorf("read cursor key: %w", err)
	}
	if readOnly {
		// Nothing was ever served from this store: cursors of this
		// session need only be consistent among themselves.
		key := make([]byte, 32)
		_, err := rand.Read(key)
		return key, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := m.store.BatchWrite(ctx, m.table, []storage.Item{{PK: secretPK, SK: secretSK, Attrs: map[string]any{"key": key}}}); err != nil {
		return nil, fmt.Errorf("write cursor key: %w", err)
	}
	item, err = m.store.GetItem(ctx, m.table, secretPK, secretSK)
	if err != nil {
		return nil, fmt.Errorf("read cursor key: %w", err)
	}
	b, _ := item.Attrs["key"].([]byte)
	return b, nil
}

// timeRange is the span of event times a logical table holds, as its
// item in the meta table records it; zero times when unknown.
type timeRange struct {
	first, last time.Time
}

// nanos is a time as the meta table stores first and last: integer Unix
// nanoseconds, which storage.AtMost compares.
func nanos(t time.Time) json.Number { return json.Number(strconv.FormatInt(t.UnixNano(), 10)) }

// rangeOf reads the range a logical table's item records.
func rangeOf(item storage.Item) timeRange {
	return timeRange{first: nanosAttr(item, "first"), last: nanosAttr(item, "last")}
}

// nanosAttr reads a time stored by nanos, zero when absent.
func nanosAttr(item storage.Item, name string) time.Time {
	s, _ := item.Attrs[name].(json.Number)
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// RangeGrain is how far a write must extend a logical table's recorded
// range of event times for the range to be written: events that arrive
// in time order would otherwise update the table's one meta item on
// every write request, a hot key on DynamoDB (about 1,000 writes a second
// per item at most). So the recorded first and last are exact event
// times, at most RangeGrain inside the true range.
const RangeGrain = time.Minute

// registerTable records a logical table of a tenant, once, and makes its
// recorded range of event times hold first and last, the times of the
// earliest and the latest event of a write, to within RangeGrain. The
// range is kept in memory too, so the meta table is written only when a
// write extends it by more than RangeGrain (for events that arrive in
// time order, about once a minute per server: an UpdateItem whose
// condition keeps the latest last whatever the order writers come in).
func (m *metaTable) registerTable(ctx context.Context, tenant, table, family string, now, first, last time.Time) error {
	k := tenant + "#" + table
	m.mu.Lock()
	known, ok := m.mu.ranges[k]
	m.mu.Unlock()
	if !ok {
		var err error
		if known, err = m.register(ctx, tenant, table, family, now, first, last); err != nil {
			return err
		}
	}
	pk := metatable.LogicalTablesPK(tenant)
	if last.After(known.last.Add(RangeGrain)) {
		err := m.store.Update(ctx, storage.Update{Table: m.table, PK: pk, SK: table,
			Conds:   []storage.Cond{storage.Exists("family"), storage.AnyOf(storage.NotExists("last"), storage.AtMost("last", nanos(last)))},
			Actions: []storage.Action{storage.Set("last", nanos(last))}})
		if err != nil && !errors.Is(err, storage.ErrConditionFailed) {
			return fmt.Errorf("record the last event time of table %q: %w", table, err)
		}
		// Failed, another writer recorded a later one: last is below
		// what is stored, and only a later time is written again.
		known.last = last
	}
	for range 3 {
		if !first.Before(known.first.Add(-RangeGrain)) && !known.first.IsZero() {
			break
		}
		cond := storage.NotExists("first")
		if !known.first.IsZero() {
			cond = storage.Equal("first", nanos(known.first))
		}
		err := m.store.Update(ctx, storage.Update{Table: m.table, PK: pk, SK: table,
			Conds:   []storage.Cond{storage.Exists("family"), cond},
			Actions: []storage.Action{storage.Set("first", nanos(first))}})
		if err == nil {
			known.first = first
			break
		}
		if !errors.Is(err, storage.ErrConditionFailed) {
			return fmt.Errorf("record the first event time of table %q: %w", table, err)
		}
		// Another writer moved first: read it, and try again if this
		// write is earlier still.
		item, err := m.store.GetItem(ctx, m.table, pk, table)
		if err != nil {
			return fmt.Errorf("look up table %q: %w", table, err)
		}
		known.first = rangeOf(item).first
	}
	m.mu.Lock()
	cur := m.mu.ranges[k]
	if cur.first.IsZero() || known.first.Before(cur.first) {
		cur.first = known.first
	}
	cur.last = maxTime(cur.last, known.last)
	m.mu.ranges[k] = cur
	m.mu.Unlock()
	return nil
}

// forget drops what the meta keeps in memory of a tenant's logical
// table, whose record was deleted.
func (m *metaTable) forget(tenant, table string) {
	m.mu.Lock()
	delete(m.mu.ranges, tenant+"#"+table)
	delete(m.mu.seen, tenant+"#"+table)
	m.mu.Unlock()
}

// register reads a logical table's item, making it with the range first
// to last when it is missing, and returns the range it records.
func (m *metaTable) register(ctx context.Context, tenant, table, family string, now, first, last time.Time) (timeRange, error) {
	pk := metatable.LogicalTablesPK(tenant)
	item, err := m.store.GetItem(ctx, m.table, pk, table)
	if err == nil {
		return rangeOf(item), nil
	}
	if !errors.Is(err, storage.ErrItemNotFound) {
		return timeRange{}, fmt.Errorf("look up table %q: %w", table, err)
	}
	err = m.store.Update(ctx, storage.Update{Table: m.table, PK: pk, SK: table,
		Conds: []storage.Cond{storage.NotExists("family")},
		Actions: []storage.Action{
			storage.Set("family", family), storage.Set("created", now.Format(time.RFC3339Nano)),
			storage.Set("first", nanos(first)), storage.Set("last", nanos(last)),
		}})
	switch {
	case err == nil:
		return timeRange{first: first, last: last}, nil
	case errors.Is(err, storage.ErrConditionFailed):
		// Another writer registered it meanwhile: what it recorded
		// is read back on the next write; extend from nothing now.
		return timeRange{}, nil
	default:
		return timeRange{}, fmt.Errorf("register table %q: %w", table, err)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// tableExists reports whether a tenant ever wrote a logical table.
func (m *metaTable) tableExists(ctx context.Context, tenant, table string) (bool, error) {
	k := tenant + "#" + table
	now := m.clock.Now()
	m.mu.Lock()
	_, known := m.mu.ranges[k]
	until, seen := m.mu.seen[k]
	if seen && !now.Before(until) {
		delete(m.mu.seen, k)
		seen = false
	}
	m.mu.Unlock()
	if known || seen {
		return true, nil
	}
	_, err := m.store.GetItem(ctx, m.table, metatable.LogicalTablesPK(tenant), table)
	switch {
	case errors.Is(err, storage.ErrItemNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look up table %q: %w", table, err)
	}
	m.mu.Lock()
	m.mu.seen[k] = now.Add(tableSeenTTL)
	m.mu.Unlock()
	return true, nil
}

// logicalTable reads a tenant's logical table, or ErrUnknownTable.
func (m *metaTable) logicalTable(ctx context.Context, tenant, table string) (LogicalTable, error) {
	item, err := m.store.GetItem(ctx, m.table, metatable.LogicalTablesPK(tenant), table)
	switch {
	case errors.Is(err, storage.ErrItemNotFound):
		return LogicalTable{}, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	case err != nil:
		return LogicalTable{}, fmt.Errorf("look up table %q: %w", table, err)
	}
	return logicalTableOf(item), nil
}

// LogicalTable is a logical table as its tenant sees it.
type LogicalTable struct {
	Name    string
	Family  string
	Created time.Time
	// First and Last are the times of the earliest and the latest event
	// written to the table; zero for a table not written since timetable
	// began to record them, and for one written before, of the events
	// written since. They bound the times of its events to within
	// RangeGrain (First - RangeGrain to Last + RangeGrain holds every
	// one): events deleted with their table (by the family's retention)
	// leave them as they were.
	First, Last time.Time
}

// LogicalTables returns the logical tables a tenant has written, in name
// order: one Query of the meta table.
func (db *DB) LogicalTables(ctx context.Context, tenant string) ([]LogicalTable, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	it := db.store.Query(ctx, storage.Query{Table: db.meta.table, PK: metatable.LogicalTablesPK(tenant)})
	defer it.Close()
	var out []LogicalTable
	for it.Next() {
		out = append(out, logicalTableOf(it.Item()))
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("list logical tables: %w", err)
	}
	return out, nil
}

// logicalTableOf reads a logical table's item.
func logicalTableOf(item storage.Item) LogicalTable {
	r := rangeOf(item)
	t := LogicalTable{Name: item.SK, First: r.first, Last: r.last}
	t.Family, _ = item.Attrs["family"].(string)
	c, _ := item.Attrs["created"].(string)
	t.Created, _ = time.Parse(time.RFC3339Nano, c)
	return t
}
