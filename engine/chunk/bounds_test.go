package chunk

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// requireSpanOfEvents requires ItemSpan of it to be the least and
// greatest times of the events Unpack reads from it.
func requireSpanOfEvents(t *testing.T, it storage.Item, scratch *[]byte) {
	t.Helper()
	evs, err := Unpack(nil, it)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	want := Span{First: evs[0].Time.UnixNano(), Last: evs[0].Time.UnixNano()}
	for _, ev := range evs {
		want.First, want.Last = min(want.First, ev.Time.UnixNano()), max(want.Last, ev.Time.UnixNano())
	}
	got, ok, err := ItemSpan(it, scratch)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, want, got, "chunk %s of %d events", it.SK, len(evs))
}

// TestItemSpan requires the span ItemSpan reads from a chunk's key and
// times column to be its events' first and last times: for chunks of
// random events (of one event, at one instant, times in every unit,
// packed as values and as differences), in their short and long keys,
// of version 1 blocks, and of rows and map items.
func TestItemSpan(t *testing.T) {
	var scratch []byte
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		evs := valid(t, genEvents(r, 1+r.IntN(200)))
		if len(evs) == 0 {
			continue
		}
		window := []time.Duration{time.Minute, time.Hour, 24 * time.Hour}[r.IntN(3)]
		items, _, err := Pack(testSeries, window, evs)
		require.NoError(t, err)
		for _, it := range items {
			requireSpanOfEvents(t, it, &scratch)
			first, _ := FirstTime(it.SK)
			block, err := decompress(it.Attrs[AttrData].([]byte))
			require.NoError(t, err)
			sum := sha256.Sum256(block)
			requireSpanOfEvents(t, storage.Item{PK: it.PK, SK: longSortKey(first, sum[:]), Attrs: map[string]any{AttrDataLong: it.Attrs[AttrData]}}, &scratch)
		}
	}
	// Times at a steady pace, packed as values; and spread, as differences.
	for _, step := range []int64{0, 1, int64(time.Millisecond), int64(time.Second)} {
		var evs []event.Event
		for i := range 50 {
			evs = append(evs, event.Event{Time: testNow.Add(time.Duration(int64(i) * step)), Series: testSeries.Series, ID: fmt.Sprint(i), Fields: map[string]any{}})
		}
		items, _, err := Pack(testSeries, 24*time.Hour, evs)
		require.NoError(t, err)
		for _, it := range items {
			requireSpanOfEvents(t, it, &scratch)
		}
	}
	b, err := os.ReadFile("testdata/v1-chunks.json")
	require.NoError(t, err)
	var fixture []v1Chunk
	require.NoError(t, json.Unmarshal(b, &fixture))
	for _, c := range fixture {
		requireSpanOfEvents(t, storage.Item{PK: c.PK, SK: c.SK, Attrs: map[string]any{AttrDataLong: c.Data}}, &scratch)
	}
	at := time.Date(2026, 12, 6, 10, 0, 0, 123456789, time.UTC)
	row := storage.Item{PK: testSeriesPK(), SK: itemenc.SortKey(at, "x"), Attrs: map[string]any{"v": json.Number("1")}}
	s, ok, err := ItemSpan(row, &scratch)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, Span{First: at.UnixNano(), Last: at.UnixNano()}, s)
	ms := itemenc.Millisecond(at)
	mapItem := storage.Item{PK: testSeriesPK(), SK: itemenc.MapSortKey(ms, 0), Attrs: map[string]any{}}
	s, ok, err = ItemSpan(mapItem, &scratch)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, Span{First: ms.UnixNano(), Last: ms.UnixNano() + int64(time.Millisecond) - 1}, s)
	_, ok, err = ItemSpan(storage.Item{PK: testSeriesPK(), SK: "not an event"}, &scratch)
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = ItemSpan(storage.Item{PK: testSeriesPK(), SK: "2026-12-06T1\"AAAAAAAAAAAAAAAAAAA", Attrs: map[string]any{AttrData: []byte{storedRaw, blockVersion, 5, 0}}}, &scratch)
	require.ErrorIs(t, err, ErrCorrupt)
}

func testSeriesPK() string {
	return itemenc.PartitionKey(testSeries.Tenant, testSeries.Table, testSeries.Series, 0)
}
