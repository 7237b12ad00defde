package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/storage"
)

// CreateTable records the table in the catalog. The table is ACTIVE when
// CreateTable returns; creating a table that exists returns an error
// wrapping storage.ErrTableExists and changes nothing.
func (s *Store) CreateTable(ctx context.Context, spec storage.TableSpec) error {
	if err := validateSpec(spec); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	if err := s.gate.Enter(); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}

	c := &s.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lookup(spec.Name) != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, storage.ErrTableExists)
	}
	rec := &record{
		ID:           c.mu.nextID,
		Tags:         maps.Clone(spec.Tags),
		TTLAttribute: spec.TTLAttribute,
		Protected:    spec.DeletionProtection,
		PITRDays:     spec.PITRDays,
		Status:       storage.StatusActive,
		CreatedAt:    s.clock.Now().UTC(),
	}
	rec.setCapacity(spec.Capacity)
	b := s.db.NewBatch()
	defer b.Close()
	if err := setRecord(b, spec.Name, rec); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	if err := b.Set(nextIDKey, binary.BigEndian.AppendUint64(nil, rec.ID+1), nil); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	c.mu.nextID++
	t := &table{name: spec.Name, id: rec.ID}
	t.rec.Store(rec)
	c.publishLocked(spec.Name, t)
	return nil
}

// setRecord adds the write of table name's catalog record to b.
func setRecord(b *pebble.Batch, name string, rec *record) error {
	val, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode catalog record: %w", err)
	}
	return b.Set(catalogKey(name), val, nil)
}

// validateSpec refuses what DynamoDB would refuse in a spec.
func validateSpec(spec storage.TableSpec) error {
	if err := validateName(spec.Name); err != nil {
		return err
	}
	return validateCapacity(spec.Capacity)
}

// validateName checks DynamoDB's table-name rules.
func validateName(name string) error {
	if len(name) < 3 || len(name) > 255 {
		return fmt.Errorf("%w: name must be 3 to 255 characters", ErrInvalidTable)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return fmt.Errorf("%w: name has %q, outside [A-Za-z0-9_.-]", ErrInvalidTable, c)
		}
	}
	return nil
}

// validateCapacity checks a billing mode and capacity. Pebble does not
// meter reads and writes, so it records the capacity without enforcing it.
func validateCapacity(c storage.Capacity) error {
	switch c.Billing {
	case storage.Provisioned, storage.OnDemand, "":
	default:
		return fmt.Errorf("%w: billing mode %q", ErrInvalidTable, c.Billing)
	}
	if c.Read < 0 || c.Write < 0 || c.MaxRead < 0 || c.MaxWrite < 0 || c.WarmRead < 0 || c.WarmWrite < 0 {
		return fmt.Errorf("%w: negative capacity", ErrInvalidTable)
	}
	switch c.Class {
	case "", storage.ClassStandard, storage.ClassInfrequentAccess:
	default:
		return fmt.Errorf("%w: table class %q", ErrInvalidTable, c.Class)
	}
	return nil
}

// setCapacity records a capacity as every store reports it
// (storage.Capacity.Normal): its billing mode, units, class and limits,
// which Pebble keeps for DescribeTable and does not enforce.
func (r *record) setCapacity(c storage.Capacity) {
	c = c.Normal()
	r.Billing, r.Read, r.Write, r.Class = c.Billing, c.Read, c.Write, c.Class
	r.MaxRead, r.MaxWrite, r.WarmRead, r.WarmWrite = c.MaxRead, c.MaxWrite, c.WarmRead, c.WarmWrite
}

// DescribeTable returns the table's spec, status and creation time.
// ItemCount is -1 (Pebble keeps no count, and counting means reading the
// table); SizeBytes is Pebble's estimate of the disk space of the table's
// key span, which leaves out what is still in memtables.
func (s *Store) DescribeTable(ctx context.Context, name string) (storage.TableInfo, error) {
	if err := s.gate.Enter(); err != nil {
		return storage.TableInfo{}, fmt.Errorf("describe table %q: %w", name, err)
	}
	defer s.gate.Exit()
	t := s.catalog.lookup(name)
	if t == nil {
		return storage.TableInfo{}, fmt.Errorf("describe table %q: %w", name, storage.ErrTableNotFound)
	}
	info := t.info()
	info.ItemCount = -1
	info.SizeBytes = -1
	start, end := tableSpan(t.id)
	if size, err := s.db.EstimateDiskUsage(start, end); err == nil {
		info.SizeBytes = int64(size)
	}
	return info, nil
}

// ListTables calls fn with the table names after after, in ascending
// order, from a snapshot of the catalog taken when ListTables is called.
func (s *Store) ListTables(ctx context.Context, after string, fn func(name string) bool) error {
	if err := s.gate.Enter(); err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	names := s.catalog.view.Load().names
	s.gate.Exit() // the snapshot needs no DB: fn may take its time
	i, found := slices.BinarySearch(names, after)
	if found {
		i++
	}
	for _, name := range names[i:] {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("list tables: %w", err)
		}
		if !fn(name) {
			return nil
		}
	}
	return nil
}

// UpdateTable records a new capacity, class and limits, more tags, a TTL
// attribute (Pebble records the attribute for DescribeTable; items are
// expired by the engine's reads, not by the store), deletion protection
// or a point-in-time recovery period. Both are recorded for DescribeTable
// and not enforced: the files of a Pebble store are the operator's to
// back up, and a table is deleted only by the lifecycle manager, which
// lifts protection first as it must on DynamoDB. Pebble never refuses a
// change: it does not return storage.ErrRefused, and it keeps none of
// DynamoDB's limits on how often a table may change (package
// storage/dynamostore/dynamofault keeps them in tests).
func (s *Store) UpdateTable(ctx context.Context, name string, u storage.TableUpdate) error {
	if u.Capacity != nil {
		if err := validateCapacity(*u.Capacity); err != nil {
			return fmt.Errorf("update table %q: %w", name, err)
		}
	}
	if err := s.gate.Enter(); err != nil {
		return fmt.Errorf("update table %q: %w", name, err)
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("update table %q: %w", name, err)
	}

	c := &s.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.lookup(name)
	if t == nil {
		return fmt.Errorf("update table %q: %w", name, storage.ErrTableNotFound)
	}
	if u.Capacity == nil && len(u.Tags) == 0 && u.TTLAttribute == "" && u.DeletionProtection == nil && u.PITRDays == nil {
		return nil
	}
	rec := *t.rec.Load()
	if u.Capacity != nil {
		rec.setCapacity(*u.Capacity)
	}
	if u.DeletionProtection != nil {
		rec.Protected = *u.DeletionProtection
	}
	if u.PITRDays != nil {
		rec.PITRDays = *u.PITRDays
	}
	if len(u.Tags) > 0 {
		rec.Tags = maps.Clone(rec.Tags)
		if rec.Tags == nil {
			rec.Tags = make(map[string]string, len(u.Tags))
		}
		maps.Copy(rec.Tags, u.Tags)
	}
	if u.TTLAttribute != "" {
		rec.TTLAttribute = u.TTLAttribute
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := setRecord(b, name, &rec); err != nil {
		return fmt.Errorf("update table %q: %w", name, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("update table %q: %w", name, err)
	}
	t.rec.Store(&rec)
	return nil
}

// DeleteTable removes the table from the catalog and deletes its items in
// one durable batch (a range deletion over the table's key span), then
// compacts that span, so that when it returns the data is out of the LSM
// and Pebble's cleaner is deleting the files that held it (at once:
// deletion pacing is off). Iterators already open on the table keep their
// snapshot, and the files it needs, until they are closed.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	if err := s.gate.Enter(); err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	start, end, err := s.dropTable(name)
	if err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	// The table is gone and durably so; compacting only gives the space
	// back now rather than at Pebble's next compaction of the span, so a
	// failure here is logged, not returned.
	if err := s.db.Compact(ctx, start, end, true); err != nil {
		s.logger.Warn("pebble store: compact deleted table's span", "table", name, "error", err)
	}
	return nil
}

// dropTable removes the table from the catalog and its items from the DB,
// and returns the table's key span.
func (s *Store) dropTable(name string) (start, end []byte, err error) {
	c := &s.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.lookup(name)
	if t == nil {
		return nil, nil, storage.ErrTableNotFound
	}

	// Wait for writes in progress, and turn away those to come.
	t.mu.Lock()
	defer t.mu.Unlock()
	start, end = tableSpan(t.id)
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Delete(catalogKey(name), nil); err != nil {
		return nil, nil, err
	}
	if err := b.DeleteRange(start, end, nil); err != nil {
		return nil, nil, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, nil, err
	}
	t.dropped = true
	c.publishLocked(name, nil)
	return start, end, nil
}
