package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// item builds an item.
func item(pk, sk string, attrs map[string]any) storage.Item {
	return storage.Item{PK: pk, SK: sk, Attrs: attrs}
}

// num is a shorthand for a number attribute.
func num(s string) json.Number { return json.Number(s) }

// key returns the i-th sort key of numbered items; keys sort in numeric
// order.
func key(i int) string { return fmt.Sprintf("k%06d", i) }

// numbered returns n items of partition pk with sort keys key(0) to
// key(n-1) and a few attributes each, in sort-key order.
func numbered(pk string, n int) []storage.Item {
	items := make([]storage.Item, n)
	for i := range items {
		items[i] = item(pk, key(i), map[string]any{
			"i":    num(fmt.Sprint(i)),
			"name": fmt.Sprintf("item %d of %s", i, pk),
			"odd":  i%2 == 1,
		})
	}
	return items
}

// writeAll writes items with one BatchWrite and requires success.
func writeAll(t *testing.T, st storage.Store, table string, items ...storage.Item) {
	t.Helper()
	require.NoError(t, st.BatchWrite(context.Background(), table, items), "write %d items to %q", len(items), table)
}

// requireItem requires GetItem to return want, up to normalisation.
func requireItem(t *testing.T, st storage.Store, table string, want storage.Item) {
	t.Helper()
	got, err := st.GetItem(context.Background(), table, want.PK, want.SK)
	require.NoError(t, err, "get %q/%q", want.PK, want.SK)
	require.Equal(t, normaliseItem(want), normaliseItem(got))
}

// queryAll runs q to the end and returns its items.
func queryAll(t *testing.T, st storage.Store, q storage.Query) []storage.Item {
	t.Helper()
	return drain(t, st.Query(context.Background(), q))
}

// scanAll scans table to the end and returns its items.
func scanAll(t *testing.T, st storage.Store, table string) []storage.Item {
	t.Helper()
	return drain(t, st.Scan(context.Background(), table))
}

// drain reads an iterator to its end, requires no error, and closes it
// twice. Of every item it reads the sort key and the attributes in
// place (SortKey, Attrs), copied, before Item, and requires the same
// from Item: so every query and scan of the suite holds both ways of
// reading an item to the same answer.
func drain(t *testing.T, it storage.Iterator) []storage.Item {
	t.Helper()
	defer it.Close()
	var items []storage.Item
	for it.Next() {
		sk, attrs := strings.Clone(it.SortKey()), map[string]any{}
		require.NoError(t, it.Attrs(func(name string, v any) bool {
			attrs[strings.Clone(name)] = storage.CloneValue(v)
			return true
		}))
		item := it.Item()
		require.Equal(t, item.SK, sk, "SortKey")
		require.Equal(t, normaliseItem(item), normaliseItem(storage.Item{PK: item.PK, SK: sk, Attrs: attrs}), "Attrs")
		items = append(items, item)
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.NoError(t, it.Close(), "Close twice")
	return items
}
