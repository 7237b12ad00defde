package chunk

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// TestWindowEvents stores a window's events as a mix a table of the
// chunk layout can hold: some as rows, the rest in the chunks of several
// requests that overlap (a retry beside other events, events written
// one at a time and again in a request), and requires the window read
// back as the row layout would read it: every event once, with the id a
// row of it has, in sort-key order.
func TestWindowEvents(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		evs := valid(t, genEvents(r, 150))
		const window = 24 * time.Hour
		s := Series{Tenant: testSeries.Tenant, Table: testSeries.Table, Series: testSeries.Series, Shards: 1 + int(seed%3)}
		var items []storage.Item
		for _, ev := range evs {
			if r.IntN(5) == 0 {
				ev.AssignID(s.Tenant, s.Table, event.LatestIDScheme)
				items = append(items, itemenc.RowItem(s.Tenant, s.Table, ev, 0))
			}
		}
		for range 1 + r.IntN(4) {
			from := r.IntN(len(evs))
			to := from + r.IntN(len(evs)-from+1)
			packed, alone, err := Pack(s, window, evs[from:to])
			require.NoError(t, err)
			require.Empty(t, alone)
			items = append(items, packed...)
		}
		// Every event is stored at least once.
		packed, _, err := Pack(s, window, evs)
		require.NoError(t, err)
		items = append(items, packed...)
		// A store returns a partition's items in sort-key order; the
		// shards of a series are merged after, by the same order.
		slices.SortFunc(items, func(a, b storage.Item) int { return cmp.Compare(a.SK, b.SK) })

		got, err := WindowEvents(nil, items, event.LatestIDScheme)
		require.NoError(t, err)

		// An event's sort key names it: a client id at one instant is
		// one event, whichever fields it was stored with.
		want := map[string][]map[string]any{}
		for _, ev := range evs {
			ev.AssignID(s.Tenant, s.Table, event.LatestIDScheme)
			sk := itemenc.SortKey(ev.Time, ev.ID)
			fields := ev.Fields
			if len(fields) == 0 {
				fields = nil
			}
			want[sk] = append(want[sk], fields)
		}
		require.Len(t, got, len(want))
		for i, d := range got {
			if i > 0 {
				require.Less(t, got[i-1].SK, d.SK, "sort-key order, each once")
			}
			require.Contains(t, want, d.SK)
			require.Equal(t, itemenc.SortKey(d.Event.Time, d.Event.ID), d.SK)
			require.Equal(t, s.Series, d.Event.Series)
			fields := d.Event.Fields
			if len(fields) == 0 {
				fields = nil
			}
			require.Contains(t, want[d.SK], fields)
		}
	}
}

func TestLowKey(t *testing.T) {
	from := time.Date(2026, 12, 6, 10, 30, 0, 5, time.UTC)
	require.Equal(t, "2026-12-06T1", LowKey(from, time.Hour))
	require.Equal(t, "2026-12-06", LowKey(from, 24*time.Hour))
	// A chunk of an event at or after from sorts at or after LowKey.
	items, _, err := Pack(testSeries, time.Hour, []event.Event{{Time: from.Add(-time.Minute), Series: testSeries.Series}, {Time: from.Add(time.Minute), Series: testSeries.Series}})
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.GreaterOrEqual(t, items[0].SK, LowKey(from, time.Hour))
}
