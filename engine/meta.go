package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// meta is the engine's view of the meta table: the registry of logical
// tables and the key that signs cursors. Tenants are kept there too, by
// package tenant.
type meta struct {
	store storage.Store
	table string
	// secret signs cursors. It is made once per meta table and shared by
	// every server on it, so a cursor from one server works on another.
	secret []byte

	mu struct {
		sync.Mutex
		// tables caches logical tables known to exist, by tenant and name.
		tables map[string]bool
	}
}

// openMeta opens the meta table, creating it unless readOnly.
func openMeta(ctx context.Context, store storage.Store, table string, readOnly bool) (*meta, error) {
	if readOnly {
		if _, err := store.DescribeTable(ctx, table); errors.Is(err, storage.ErrTableNotFound) {
			return nil, fmt.Errorf("%w: %q", ErrNoMetaTable, table)
		} else if err != nil {
			return nil, fmt.Errorf("open meta table %q: %w", table, err)
		}
	} else {
		spec := storage.TableSpec{Name: table, Capacity: storage.Capacity{Billing: storage.OnDemand}, Tags: map[string]string{"timetable:role": "meta"}}
		if err := store.CreateTable(ctx, spec); err != nil && !errors.Is(err, storage.ErrTableExists) {
			return nil, fmt.Errorf("create meta table %q: %w", table, err)
		}
	}
	m := &meta{store: store, table: table}
	m.mu.tables = map[string]bool{}
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
func (m *meta) loadSecret(ctx context.Context, readOnly bool) ([]byte, error) {
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

// registerTable records a logical table of a tenant, once.
func (m *meta) registerTable(ctx context.Context, tenant, table, family string, now time.Time) error {
	k := tenant + "#" + table
	m.mu.Lock()
	known := m.mu.tables[k]
	m.mu.Unlock()
	if known {
		return nil
	}
	if _, err := m.store.GetItem(ctx, m.table, metatable.LogicalTablesPK(tenant), table); errors.Is(err, storage.ErrItemNotFound) {
		item := storage.Item{PK: metatable.LogicalTablesPK(tenant), SK: table, Attrs: map[string]any{"family": family, "created": now.Format(time.RFC3339Nano)}}
		if err := m.store.BatchWrite(ctx, m.table, []storage.Item{item}); err != nil {
			return fmt.Errorf("register table %q: %w", table, err)
		}
	} else if err != nil {
		return fmt.Errorf("look up table %q: %w", table, err)
	}
	m.mu.Lock()
	m.mu.tables[k] = true
	m.mu.Unlock()
	return nil
}

// tableExists reports whether a tenant ever wrote a logical table.
func (m *meta) tableExists(ctx context.Context, tenant, table string) (bool, error) {
	k := tenant + "#" + table
	m.mu.Lock()
	known := m.mu.tables[k]
	m.mu.Unlock()
	if known {
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
	m.mu.tables[k] = true
	m.mu.Unlock()
	return true, nil
}

// LogicalTables returns the logical tables a tenant has written, in name
// order.
func (db *DB) LogicalTables(ctx context.Context, tenant string) ([]string, error) {
	it := db.store.Query(ctx, storage.Query{Table: db.meta.table, PK: metatable.LogicalTablesPK(tenant)})
	defer it.Close()
	var names []string
	for it.Next() {
		names = append(names, it.Item().SK)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("list logical tables: %w", err)
	}
	return names, nil
}
