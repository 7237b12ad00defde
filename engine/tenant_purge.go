package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// purgeBatch is how many keys one BatchDelete of a purge takes.
const purgeBatch = 1000

// Purged says what DeleteTenantData deleted.
type Purged struct {
	// Tables are the logical tables whose data went.
	Tables []string
	// Items is how many items were deleted from the data tables.
	Items int64
}

// DeleteTenantData deletes every item a tenant's events made: in every
// physical table of each of its logical tables, every series' partitions
// in every shard, the series' rollups, the version markers and the
// series index; then the logical table's record in the meta table. It
// does not touch the tenant's keys: revoke them first (tenant.Directory's
// Remove), or writes may add data while it runs.
//
// It is idempotent and resumable: items go partition by partition, the
// series index of a physical table last and the logical table's record
// after every physical table, so running it again after a failure finds
// what is left and deletes it. It reads keys only and holds one page of
// them at a time, so its memory does not grow with the data.
func (db *DB) DeleteTenantData(ctx context.Context, tenant string) (Purged, error) {
	done, err := db.enter()
	if err != nil {
		return Purged{}, err
	}
	defer done()
	if db.opts.ReadOnly {
		return Purged{}, ErrReadOnly
	}
	tables, err := db.LogicalTables(ctx, tenant)
	if err != nil {
		return Purged{}, err
	}
	var out Purged
	for _, lt := range tables {
		f := db.familyNamed(lt.Family, lt.Name)
		phys, err := db.catalog.tables(ctx, f, time.Unix(0, 0).UTC(), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return out, err
		}
		n, err := db.purgeTables(ctx, phys, tenant, lt.Name)
		out.Items += n
		if err != nil {
			return out, err
		}
		pk := metatable.LogicalTablesPK(tenant)
		if err := db.store.BatchDelete(ctx, db.meta.table, []storage.Key{{PK: pk, SK: lt.Name}}); err != nil {
			return out, fmt.Errorf("delete the record of table %q: %w", lt.Name, err)
		}
		db.meta.forget(tenant, lt.Name)
		db.series.forget(tenant, lt.Name)
		out.Tables = append(out.Tables, lt.Name)
	}
	return out, nil
}

// familyNamed returns the schema's family of that name, or the one the
// schema gives table.
func (db *DB) familyNamed(name, table string) family.Family {
	if i := slices.IndexFunc(db.opts.Schema.Families, func(f family.Family) bool { return f.Name == name }); i >= 0 {
		return db.opts.Schema.Families[i]
	}
	return db.opts.Schema.Family(table)
}

// purgeTables deletes a tenant's logical table's items in its physical
// tables, and returns how many it deleted. A series' rollups live in the
// table their unit's start routes to, which need not hold the series'
// events, so every table is purged of every series any index names; the
// indexes go last, so that a run again after a failure finds the series.
func (db *DB) purgeTables(ctx context.Context, tables []physTable, tenant, table string) (int64, error) {
	series, err := db.seriesOf(ctx, tenant, table, tables)
	if err != nil {
		return 0, err
	}
	var n int64
	purge := func(t physTable, pk string) error {
		deleted, err := db.purgePartition(ctx, t.name, pk)
		n += deleted
		return err
	}
	for _, t := range tables {
		for _, s := range series {
			for shard := range t.shards {
				if err := purge(t, itemenc.PartitionKey(tenant, table, s, shard)); err != nil {
					return n, err
				}
			}
			for _, u := range rollupUnits {
				if err := purge(t, itemenc.RollupKey(tenant, table, s, u.name)); err != nil {
					return n, err
				}
			}
		}
		if err := purge(t, itemenc.MarkerKey(tenant, table)); err != nil {
			return n, err
		}
	}
	for _, t := range tables {
		if err := purge(t, itemenc.SeriesIndexKey(tenant, table)); err != nil {
			return n, err
		}
	}
	return n, nil
}

// purgePartition deletes every item of a partition, a page of keys at a
// time.
func (db *DB) purgePartition(ctx context.Context, table, pk string) (int64, error) {
	var n int64
	for {
		it := db.store.Query(ctx, storage.Query{Table: table, PK: pk, Attrs: []string{}, Limit: purgeBatch})
		var keys []storage.Key
		for it.Next() {
			keys = append(keys, it.Item().Key())
		}
		if err := it.Close(); err != nil {
			if errors.Is(err, storage.ErrTableNotFound) {
				return n, nil
			}
			return n, fmt.Errorf("read partition %q of %q: %w", pk, table, err)
		}
		if len(keys) == 0 {
			return n, nil
		}
		if err := db.store.BatchDelete(ctx, table, keys); err != nil {
			return n, fmt.Errorf("delete from partition %q of %q: %w", pk, table, err)
		}
		n += int64(len(keys))
	}
}
