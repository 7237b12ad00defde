package itemenc

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// TestMapItemSizeArithmetic checks that the sizes the writer adds up
// without building items are those of the items it builds.
func TestMapItemSizeArithmetic(t *testing.T) {
	ms := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	pk, sk := "acme#m#dev#0", MapSortKey(ms, 3)
	extra := map[string]any{"tt_expires": json.Number("1491825600")}
	var events []MapEvent
	for i := range 40 {
		e := MapEvent{ID: fmt.Sprintf("id-%d", i), Fields: map[string]any{"v": json.Number(fmt.Sprint(i * 7)), "s": "text"}}
		if i%3 == 0 {
			e.Nanos = int64(i) * 1000
		}
		if i%4 == 0 {
			e.Fields["tags"] = []any{"a", true, nil}
		}
		events = append(events, e)
	}
	for n := 1; n <= len(events); n++ {
		it := MapItemFor(pk, sk, events[:n], extra)
		recorded, err := json.Number(it.Attrs[MapSize].(json.Number)).Int64()
		require.NoError(t, err)
		delete(it.Attrs, MapSize)
		built := storage.ItemSize(it)
		require.Equal(t, built, NewMapItemSize(pk, sk, extra)+AppendCost(events[:n], NewMapItemFields()), "%d events", n)
		require.EqualValues(t, built+len(MapSize)+SizeSlack, recorded)

		// Appending the rest to the item costs what the item grows by.
		rest := events[n:]
		if len(rest) > 0 {
			whole := MapItemFor(pk, sk, events, extra)
			delete(whole.Attrs, MapSize)
			require.Equal(t, storage.ItemSize(whole)-built, AppendCost(rest, MapStateOf(it).Fields), "%d then %d events", n, len(rest))
		}
	}
}
