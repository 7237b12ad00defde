package engine

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// TestMapItemSizeArithmetic checks that the sizes the writer adds up
// without building items are those of the items it builds.
func TestMapItemSizeArithmetic(t *testing.T) {
	ms := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	pk, sk := "acme#m#dev#0", itemenc.MapSortKey(ms, 3)
	extra := map[string]any{"tt_expires": json.Number("1491825600")}
	var events []mapEvent
	for i := range 40 {
		e := mapEvent{id: fmt.Sprintf("id-%d", i), fields: map[string]any{"v": json.Number(fmt.Sprint(i * 7)), "s": "text"}}
		if i%3 == 0 {
			e.nanos = int64(i) * 1000
		}
		if i%4 == 0 {
			e.fields["tags"] = []any{"a", true, nil}
		}
		events = append(events, e)
	}
	for n := 1; n <= len(events); n++ {
		it := mapItemFor(pk, sk, events[:n], extra)
		recorded, err := json.Number(it.Attrs[itemenc.MapSize].(json.Number)).Int64()
		require.NoError(t, err)
		delete(it.Attrs, itemenc.MapSize)
		built := storage.ItemSize(it)
		require.Equal(t, built, newItemSize(pk, sk, extra)+appendCost(events[:n], newItemFields()), "%d events", n)
		require.EqualValues(t, built+len(itemenc.MapSize)+sizeSlack, recorded)

		// Appending the rest to the item costs what the item grows by.
		rest := events[n:]
		if len(rest) > 0 {
			whole := mapItemFor(pk, sk, events, extra)
			delete(whole.Attrs, itemenc.MapSize)
			require.Equal(t, storage.ItemSize(whole)-built, appendCost(rest, stateOf(it).fields), "%d then %d events", n, len(rest))
		}
	}
}
