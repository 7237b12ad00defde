package chunk

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

var updateV1 = flag.Bool("update-v1", false, "write testdata/v1-chunks.json from the events of v1Events (only with the version 1 writer)")

// v1Chunk is a stored chunk item of the fixture and the events it reads
// back as: each event's time, id and %#v of its fields, which names
// every value's Go type.
type v1Chunk struct {
	PK, SK string
	Data   []byte   // AttrDataLong, as version 1 items named it
	Events []string // readBack
}

// v1Events are the events the fixture's chunks hold: random shapes of
// every value type, and the guide's readings.
func v1Events(t testing.TB) []event.Event {
	evs := valid(t, genEvents(rand.New(rand.NewPCG(39, 1)), 300))
	for _, ev := range guideEvents(20) {
		ev.Series = testSeries.Series
		evs = append(evs, ev)
	}
	return evs
}

func readBack(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%d %q %q %#v", ev.Time.UnixNano(), ev.Series, ev.ID, ev.Fields)
	}
	return out
}

// TestVersion1ChunksStillRead reads the chunk items the version 1 writer
// stored (testdata/v1-chunks.json) and requires the very events they held
// then, types and all: a stored chunk is read by every later version.
func TestVersion1ChunksStillRead(t *testing.T) {
	const path = "testdata/v1-chunks.json"
	if *updateV1 {
		items, alone, err := Pack(testSeries, time.Hour, v1Events(t))
		require.NoError(t, err)
		require.Empty(t, alone)
		// A chunk of one small event, stored without compression.
		small, _, err := Pack(testSeries, time.Hour, []event.Event{{Time: testNow, Series: testSeries.Series, ID: "x", Fields: map[string]any{"n": json.Number("-1.5")}}})
		require.NoError(t, err)
		require.Equal(t, byte(storedRaw), small[0].Attrs[AttrData].([]byte)[0])
		items = append(items, small...)
		var fixture []v1Chunk
		for _, it := range items {
			evs, err := Unpack(nil, it)
			require.NoError(t, err)
			fixture = append(fixture, v1Chunk{PK: it.PK, SK: it.SK, Data: it.Attrs[AttrData].([]byte), Events: readBack(evs)})
		}
		b, err := json.MarshalIndent(fixture, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var fixture []v1Chunk
	require.NoError(t, json.Unmarshal(b, &fixture))
	require.NotEmpty(t, fixture)
	for _, c := range fixture {
		block, err := decompress(c.Data)
		require.NoError(t, err)
		require.Equal(t, byte(1), block[0], "a version 1 block")
		evs, err := Unpack(nil, storage.Item{PK: c.PK, SK: c.SK, Attrs: map[string]any{AttrDataLong: c.Data, AttrCount: json.Number(fmt.Sprint(len(c.Events)))}})
		require.NoError(t, err)
		require.Equal(t, c.Events, readBack(evs), "chunk %s", c.SK)
		// An aggregate's column reader reads the same events' values.
		var fields []string
		for _, ev := range evs {
			for name := range ev.Fields {
				if !slices.Contains(fields, name) {
					fields = append(fields, name)
				}
			}
		}
		var cols Columns
		require.NoError(t, ReadColumns(&cols, c.SK, c.Data, fields))
		require.Len(t, cols.Times, len(evs))
		for f, name := range fields {
			col, j := &cols.Fields[f], 0
			for i, ev := range evs {
				require.Equal(t, ev.Time.UnixNano(), cols.Times[i])
				v, ok := ev.Fields[name]
				require.Equal(t, ok, col.Has(i), "chunk %s event %d field %s", c.SK, i, name)
				if ok {
					require.Equal(t, v, col.Values[j], "chunk %s event %d field %s", c.SK, i, name)
					j++
				}
			}
		}
	}
}

// TestLongSortKeysStillRead reads version 2 chunks in the form written
// before short sort keys (the first event's whole time key, the
// attribute tt_c): the same events and columns as their short form.
func TestLongSortKeysStillRead(t *testing.T) {
	items, _, err := Pack(testSeries, time.Hour, v1Events(t))
	require.NoError(t, err)
	require.NotEmpty(t, items)
	for _, it := range items {
		first, ok := FirstTime(it.SK)
		require.True(t, ok)
		block, err := decompress(it.Attrs[AttrData].([]byte))
		require.NoError(t, err)
		require.Equal(t, byte(blockVersion), block[0])
		sum := sha256.Sum256(block)
		long := storage.Item{PK: it.PK, SK: longSortKey(first, sum[:]), Attrs: map[string]any{AttrDataLong: it.Attrs[AttrData]}}
		require.Equal(t, it.SK[len(it.SK)-sumChars:], long.SK[len(long.SK)-sumChars:], "the same sum")
		require.True(t, IsSortKey(long.SK))
		want, err := Unpack(nil, it)
		require.NoError(t, err)
		got, err := Unpack(nil, long)
		require.NoError(t, err)
		require.Equal(t, readBack(want), readBack(got))
		var a, b Columns
		require.NoError(t, ReadColumns(&a, it.SK, it.Attrs[AttrData].([]byte), []string{"v"}))
		require.NoError(t, ReadColumns(&b, long.SK, long.Attrs[AttrDataLong].([]byte), []string{"v"}))
		require.Equal(t, a.Times, b.Times)
	}
}
