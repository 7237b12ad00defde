package chunk

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// FuzzPackRoundTrip packs random events (genEvents, from the fuzzed
// seed) with a fuzzed window and shard count, and requires every event
// back exactly, once, in items under DynamoDB's limit, the same items
// from the events in any order.
func FuzzPackRoundTrip(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint16(200), uint8(seed), uint8(seed%5))
	}
	f.Add(uint64(99), uint16(1), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, window, shards uint8) {
		r := rand.New(rand.NewPCG(seed, seed>>7))
		evs := valid(t, genEvents(r, int(n%2000)))
		windows := []time.Duration{time.Nanosecond, time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour}
		s := testSeries
		s.Shards = int(shards)
		roundTrip(t, s, windows[int(window)%len(windows)], evs)
	})
}

// FuzzUnpack: any bytes as a chunk are read without a panic, and either
// refused as corrupt or read as events of the item's series, and by
// ReadColumns (into one Columns, reused) as times the same.
func FuzzUnpack(f *testing.F) {
	var cols Columns
	items, _, err := Pack(testSeries, time.Hour, valid(f, genEvents(rand.New(rand.NewPCG(1, 1)), 30)))
	require.NoError(f, err)
	data := items[0].Attrs[AttrData].([]byte)
	block, err := decompress(data)
	require.NoError(f, err)
	f.Add(data)
	f.Add(append([]byte{storedRaw}, block...))
	f.Add([]byte{storedRaw, blockVersion, 1, 2, 0, 1, 1, 'x', 0, kindFloat, 3, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		it := storage.Item{PK: items[0].PK, SK: items[0].SK, Attrs: map[string]any{AttrData: data}}
		evs, err := Unpack(nil, it)
		colsErr := ReadColumns(&cols, it.SK, data, []string{"f0", "x", "f3"})
		if colsErr != nil {
			require.ErrorIs(t, colsErr, ErrCorrupt)
		}
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		for _, ev := range evs {
			require.Equal(t, testSeries.Series, ev.Series)
		}
		// What Unpack reads, ReadColumns reads, into a Columns an
		// earlier input left as it was.
		require.NoError(t, colsErr)
		require.Len(t, cols.Times, len(evs))
		for i, ev := range evs {
			require.Equal(t, ev.Time.UnixNano(), cols.Times[i])
		}
	})
}
