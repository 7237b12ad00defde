package chunk

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// TestExpiry: a chunk carries the expiry of its newest event (its time
// plus the TTL), or At when later, in family.TTLAttribute, and none
// without either; the expiry leaves its key alone, and counts in its
// size.
func TestExpiry(t *testing.T) {
	evs := valid(t, genEvents(rand.New(rand.NewPCG(7, 8)), 200))
	plain, _, err := Pack(testSeries, time.Hour, evs)
	require.NoError(t, err)
	for _, it := range plain {
		require.NotContains(t, it.Attrs, family.TTLAttribute)
	}
	const ttl = 30 * 24 * time.Hour
	late := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		x    Expiry
		want func(newest time.Time) int64
	}{
		{"ttl", Expiry{TTL: ttl}, func(newest time.Time) int64 { return newest.Add(ttl).Unix() }},
		{"at", Expiry{At: late}, func(time.Time) int64 { return late.Unix() }},
		{"ttl past at", Expiry{TTL: ttl, At: time.Unix(0, 0)}, func(newest time.Time) int64 { return newest.Add(ttl).Unix() }},
	} {
		s := testSeries
		s.Expiry = tc.x
		items, _, err := Pack(s, time.Hour, evs)
		require.NoError(t, err, tc.name)
		require.Len(t, items, len(plain), tc.name)
		for i, it := range items {
			require.Equal(t, plain[i].Key(), it.Key(), "%s: the expiry is not in the key", tc.name)
			in, err := Unpack(nil, it)
			require.NoError(t, err)
			newest := in[len(in)-1].Time
			require.Equal(t, json.Number(strconv.FormatInt(tc.want(newest), 10)), it.Attrs[family.TTLAttribute], tc.name)
			for _, ev := range in {
				require.False(t, time.Unix(tc.want(newest), 0).Before(time.Unix(ev.Time.Add(tc.x.TTL).Unix(), 0)), "%s: no event expires early", tc.name)
			}
		}
	}

	// An event whose chunk just fits without the expiry is left for
	// the row layout with it: the expiry counts in the item's size.
	r := rand.New(rand.NewPCG(9, 10))
	blob := make([]byte, storage.MaxItemSize)
	for i := range blob {
		blob[i] = byte(r.Uint32())
	}
	one := func(n int) []event.Event {
		return []event.Event{{Time: at(1), Fields: map[string]any{"b": blob[:n]}}}
	}
	n := sort.Search(storage.MaxItemSize, func(n int) bool {
		_, alone, err := Pack(testSeries, time.Hour, one(n))
		require.NoError(t, err)
		return len(alone) > 0
	}) - 1 // the largest blob that is a chunk
	items, alone, err := Pack(testSeries, time.Hour, one(n))
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Empty(t, alone)
	s := testSeries
	s.Expiry = Expiry{TTL: ttl}
	items, alone, err = Pack(s, time.Hour, one(n))
	require.NoError(t, err)
	require.Empty(t, items)
	require.Len(t, alone, 1)
}
