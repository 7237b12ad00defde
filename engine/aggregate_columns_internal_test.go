package engine

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/internal/agg"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// TestColumnFoldWindows folds windows of chunks: chunks apart in time
// from their columns, chunks whose times overlap (one event in two of
// them) and a chunk beside a row from their events, each event once.
func TestColumnFoldWindows(t *testing.T) {
	hour := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	s := chunk.Series{Tenant: "acme", Table: "t", Series: "car"}
	at := func(min int) event.Event {
		return event.Event{Time: hour.Add(time.Duration(min) * time.Minute), Fields: map[string]any{"v": json.Number(strconv.Itoa(min)), "x": json.Number("0.5")}, Series: "car"}
	}
	pack := func(evs ...event.Event) storage.Item {
		items, _, err := chunk.Pack(s, time.Hour, evs)
		require.NoError(t, err)
		require.Len(t, items, 1)
		return items[0]
	}
	row := func(ev event.Event) storage.Item {
		ev.AssignID("acme", "t", event.IDScheme(0))
		return itemenc.RowItem("acme", "t", ev, 0)
	}
	for _, c := range []struct {
		name            string
		items           []storage.Item
		count           int64
		sum             string
		folded, decoded int
	}{
		{"one chunk", []storage.Item{pack(at(1), at(2), at(3))}, 3, "6", 1, 0},
		{"chunks apart", []storage.Item{pack(at(1), at(2)), pack(at(3), at(40))}, 4, "46", 1, 0},
		{"chunks overlapping", []storage.Item{pack(at(1), at(5)), pack(at(3), at(40))}, 4, "49", 0, 1},
		{"an event in two chunks", []storage.Item{pack(at(1), at(5)), pack(at(5), at(40))}, 3, "46", 0, 1},
		{"a chunk and its event as a row", []storage.Item{pack(at(1), at(5)), row(at(5))}, 2, "6", 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := &AggregateQuery{Bucket: 24 * time.Hour, Fields: []string{"v"}, Funcs: []string{FnCount, FnSum}}
			sum := &agg.Summary{Want: agg.NeedsOf(q.Funcs)}
			f := &columnFold{q: q, series: "car", from: hour.UnixNano(), to: hour.Add(time.Hour).UnixNano(),
				at: func(int64) (*agg.Summary, int64, error) { return sum, hour.Add(24 * time.Hour).UnixNano(), nil }}
			for _, it := range c.items {
				f.items = append(f.items, newTableItem(it, 0))
			}
			require.NoError(t, f.window())
			require.Equal(t, c.folded, f.folded, "windows folded from columns")
			require.Equal(t, c.decoded, f.decoded, "windows decoded into events")
			b, err := sum.Bucket(Bucket{Values: map[string]map[string]any{}}, hour, q.Fields, q.Funcs, true, RankNearest)
			require.NoError(t, err)
			require.Equal(t, c.count, b.Events)
			require.Equal(t, json.Number(c.sum), b.Values["v"][FnSum])
		})
	}
}
