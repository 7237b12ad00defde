package pebblestore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/storage"
)

// record is a table's catalog entry as stored, in JSON: it is small, read
// once at Open and written only on table changes, and JSON keeps it
// readable with pebble's own tools.
type record struct {
	ID      uint64          `json:"id"`
	Billing storage.Billing `json:"billing"`
	Read    int64           `json:"read"`
	Write   int64           `json:"write"`
	// The class, limits, deletion protection and PITR are recorded for
	// DescribeTable, and not enforced (see UpdateTable).
	Class        storage.Class     `json:"class,omitempty"`
	MaxRead      int64             `json:"max_read,omitempty"`
	MaxWrite     int64             `json:"max_write,omitempty"`
	WarmRead     int64             `json:"warm_read,omitempty"`
	WarmWrite    int64             `json:"warm_write,omitempty"`
	Protected    bool              `json:"deletion_protection,omitempty"`
	PITRDays     int               `json:"pitr_days,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	TTLAttribute string            `json:"ttl_attribute,omitempty"`
	Status       storage.Status    `json:"status"`
	CreatedAt    time.Time         `json:"created_at"`
}

// table is a live table: its immutable name and id, its current record,
// and the lock that keeps a write from landing in a table being deleted.
type table struct {
	name string
	id   uint64
	rec  atomic.Pointer[record]

	// mu is held shared by every BatchWrite while it commits, and
	// exclusively by DeleteTable while it marks the table dropped and
	// deletes its key span, so that no write commits into a deleted
	// table's span after the DeleteRange. Writes to different tables never
	// share a lock.
	mu      sync.RWMutex
	dropped bool // guarded by mu
}

// catalogView is an immutable snapshot of the tables: readers load it with
// one atomic read and never lock.
type catalogView struct {
	byName map[string]*table
	names  []string // sorted bytewise
}

// catalog holds the tables. Changes are serialised by mu and published as
// a new view (copy on write: tables change rarely, items often).
type catalog struct {
	view atomic.Pointer[catalogView]

	mu struct {
		sync.Mutex
		nextID uint64
	}
}

// lookup returns the live table called name, or nil.
func (c *catalog) lookup(name string) *table {
	return c.view.Load().byName[name]
}

// publishLocked replaces the view with one where name maps to t, or where
// name is gone when t is nil. c.mu must be held.
func (c *catalog) publishLocked(name string, t *table) {
	old := c.view.Load()
	v := &catalogView{byName: maps.Clone(old.byName)}
	if v.byName == nil {
		v.byName = make(map[string]*table)
	}
	i, found := slices.BinarySearch(old.names, name)
	switch {
	case t != nil && !found:
		v.names = slices.Insert(slices.Clone(old.names), i, name)
		v.byName[name] = t
	case t != nil:
		v.names = old.names
		v.byName[name] = t
	case found:
		v.names = slices.Delete(slices.Clone(old.names), i, i+1)
		delete(v.byName, name)
	default:
		v.names = old.names
	}
	c.view.Store(v)
}

// load reads the catalog and the next table id from db.
func (c *catalog) load(db *pebble.DB) error {
	v := &catalogView{byName: make(map[string]*table)}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: catalogStart, UpperBound: catalogEnd})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[1:])
		val, err := it.ValueAndErr()
		if err != nil {
			break
		}
		var rec record
		if err := json.Unmarshal(val, &rec); err != nil {
			it.Close()
			return fmt.Errorf("table %q: catalog record: %w", name, err)
		}
		t := &table{name: name, id: rec.ID}
		t.rec.Store(&rec)
		v.byName[name] = t
		v.names = append(v.names, name) // keys come in bytewise order
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	if err := it.Close(); err != nil {
		return err
	}
	c.mu.nextID = 1
	val, closer, err := db.Get(nextIDKey)
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return err
	default:
		if len(val) != 8 {
			closer.Close()
			return fmt.Errorf("next table id: %w", errCorrupt)
		}
		c.mu.nextID = binary.BigEndian.Uint64(val)
		closer.Close()
	}
	c.view.Store(v)
	return nil
}

// info returns what DescribeTable reports of t, without the size
// estimates. The caller owns the returned tags.
func (t *table) info() storage.TableInfo {
	rec := t.rec.Load()
	return storage.TableInfo{
		TableSpec: storage.TableSpec{
			Name: t.name,
			Capacity: storage.Capacity{Billing: rec.Billing, Read: rec.Read, Write: rec.Write, Class: rec.Class,
				MaxRead: rec.MaxRead, MaxWrite: rec.MaxWrite, WarmRead: rec.WarmRead, WarmWrite: rec.WarmWrite},
			Tags:               maps.Clone(rec.Tags),
			TTLAttribute:       rec.TTLAttribute,
			DeletionProtection: rec.Protected,
			PITRDays:           rec.PITRDays,
		},
		Status:    rec.Status,
		CreatedAt: rec.CreatedAt,
	}
}
