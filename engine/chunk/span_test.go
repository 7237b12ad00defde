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

// requireSpanOfEvents requires the span of it to be the least and
// greatest times of the events Unpack reads from it.
func requireSpanOfEvents(t *testing.T, it storage.Item, r *SpanReader) {
	t.Helper()
	evs, err := Unpack(nil, it)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	want := Span{First: evs[0].Time.UnixNano(), Last: evs[0].Time.UnixNano()}
	for _, ev := range evs {
		want.First, want.Last = min(want.First, ev.Time.UnixNano()), max(want.Last, ev.Time.UnixNano())
	}
	got, ok, err := r.Span(it)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, want, got, "chunk %s of %d events", it.SK, len(evs))
}

// TestItemSpan requires the span SpanReader reads from a chunk's key and
// times column to be its events' first and last times: for chunks of
// random events (of one event, at one instant, times in every unit,
// packed as values and as differences), in their short and long keys,
// of version 1 blocks, and of rows and map items.
func TestItemSpan(t *testing.T) {
	var r SpanReader
	for seed := range uint64(40) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		evs := valid(t, genEvents(rnd, 1+rnd.IntN(200)))
		if len(evs) == 0 {
			continue
		}
		window := []time.Duration{time.Minute, time.Hour, 24 * time.Hour}[rnd.IntN(3)]
		items, _, err := Pack(testSeries, window, evs)
		require.NoError(t, err)
		for _, it := range items {
			requireSpanOfEvents(t, it, &r)
			first, _ := FirstTime(it.SK)
			block, err := decompress(it.Attrs[AttrData].([]byte))
			require.NoError(t, err)
			sum := sha256.Sum256(block)
			requireSpanOfEvents(t, storage.Item{PK: it.PK, SK: longSortKey(first, sum[:]), Attrs: map[string]any{AttrDataLong: it.Attrs[AttrData]}}, &r)
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
			requireSpanOfEvents(t, it, &r)
		}
	}
	b, err := os.ReadFile("testdata/v1-chunks.json")
	require.NoError(t, err)
	var fixture []v1Chunk
	require.NoError(t, json.Unmarshal(b, &fixture))
	for _, c := range fixture {
		requireSpanOfEvents(t, storage.Item{PK: c.PK, SK: c.SK, Attrs: map[string]any{AttrDataLong: c.Data}}, &r)
	}
	at := time.Date(2026, 12, 6, 10, 0, 0, 123456789, time.UTC)
	row := storage.Item{PK: testSeriesPK(), SK: itemenc.SortKey(at, "x"), Attrs: map[string]any{"v": json.Number("1")}}
	s, ok, err := r.Span(row)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, Span{First: at.UnixNano(), Last: at.UnixNano()}, s)
	ms := itemenc.Millisecond(at)
	mapItem := storage.Item{PK: testSeriesPK(), SK: itemenc.MapSortKey(ms, 0), Attrs: map[string]any{}}
	s, ok, err = r.Span(mapItem)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, Span{First: ms.UnixNano(), Last: ms.UnixNano() + int64(time.Millisecond) - 1}, s)
	_, ok, err = r.Span(storage.Item{PK: testSeriesPK(), SK: "not an event"})
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = r.Span(storage.Item{PK: testSeriesPK(), SK: "2026-12-06T1\"AAAAAAAAAAAAAAAAAAA", Attrs: map[string]any{AttrData: []byte{storedRaw, blockVersion, 5, 0}}})
	require.ErrorIs(t, err, ErrCorrupt)
}

func testSeriesPK() string {
	return itemenc.PartitionKey(testSeries.Tenant, testSeries.Table, testSeries.Series, 0)
}
