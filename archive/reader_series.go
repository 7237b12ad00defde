package archive

import (
	"context"
	"slices"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// tenantTable names a tenant's logical table.
type tenantTable struct {
	tenant, table string
}

// seriesIndex answers a query of the series index of a tenant's logical
// table (partition key pk) in an archive: an item per series of the
// archive's Parquet files, as the table's series index held them, so
// that an archived period lists its series (engine.DB.ListSeries, SHOW
// TAG VALUES, the series an InfluxQL tag filter matches) as it did
// before its archive.
//
// The series are learnt from the files themselves, not from a list the
// archiver writes into the manifest: archives made before the reader
// listed series answer too, without being made again, and what is listed
// is exactly what the files hold, checked against the manifest like
// every read. The first listing of a logical table reads the tenant,
// table and series columns of the row groups that may hold it (no field
// column); the archive keeps the list while it is open (an archive whose files change is opened again, and lists again),
// so a series list of an archived period costs a read of its files once.
func (c *Reader) seriesIndex(ctx context.Context, targetURL, table string, generation int64, tenant, logical, pk string) ([]storage.Item, error) {
	t, err := c.table(ctx, targetURL, table, generation)
	if err != nil {
		return nil, err
	}
	defer c.release(t)
	series, err := c.seriesOf(t, tenantTable{tenant, logical})
	if err != nil {
		return nil, err
	}
	out := make([]storage.Item, 0, len(series))
	for _, s := range series {
		out = append(out, storage.Item{PK: pk, SK: itemenc.SeriesIndexPrefix + s})
	}
	return out, nil
}

// seriesOf returns the series of a logical table in an opened archive,
// sorted, from what the archive keeps or else from its files. Two queries
// that list at once may both read the files; both get the same list.
func (c *Reader) seriesOf(t *archivedTable, k tenantTable) ([]string, error) {
	c.mu.Lock()
	s, ok := t.series[k]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var all []string
	for i, f := range t.files {
		s, err := f.Series(k.tenant, k.table)
		if err != nil {
			return nil, c.unreadable(t, i, err)
		}
		all = append(all, s...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	c.mu.Lock()
	if t.series == nil {
		t.series = map[tenantTable][]string{}
	}
	t.series[k] = all
	c.mu.Unlock()
	return all, nil
}
