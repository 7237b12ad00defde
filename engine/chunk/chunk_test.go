package chunk

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

var (
	testNow    = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	testSeries = Series{Tenant: "acme", Table: "cars", Series: "car#17\x00x", Shards: 4}
)

// valid returns the events that pass package event's validation, as a
// request's would, normalized as it normalizes them.
func valid(t testing.TB, evs []event.Event) []event.Event {
	t.Helper()
	out := evs[:0]
	for _, ev := range evs {
		if event.Validate(&ev, event.Limits{}, testNow) == nil {
			ev.Series = testSeries.Series
			out = append(out, ev)
		}
	}
	return out
}

// fingerprint is an event's identity as the tests see it, independent of
// the package's own encoding: the time, the client id, and the fields as
// JSON (encoding/json sorts map keys) when there is no client id.
func fingerprint(ev event.Event) string {
	content := ""
	if ev.ID == "" {
		b, err := json.Marshal(ev.Fields)
		if err != nil {
			panic(err)
		}
		content = string(b)
	}
	return fmt.Sprintf("%d|%q|%s", ev.Time.UnixNano(), ev.ID, content)
}

// byFingerprint sorts evs by fingerprint, each computed once, and
// returns the fingerprints in the new order.
func byFingerprint(evs []event.Event) []string {
	prints := make([]string, len(evs))
	idx := make([]int, len(evs))
	for i, ev := range evs {
		prints[i], idx[i] = fingerprint(ev), i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(prints[a], prints[b]) })
	sorted, sortedPrints := make([]event.Event, len(evs)), make([]string, len(evs))
	for i, j := range idx {
		sorted[i], sortedPrints[i] = evs[j], prints[j]
	}
	copy(evs, sorted)
	return sortedPrints
}

// distinct returns evs sorted by fingerprint, each event once: what the
// chunks of evs must read back as.
func distinct(evs []event.Event) []event.Event {
	out := slices.Clone(evs)
	prints := byFingerprint(out)
	n := 0
	for i := range out {
		if i == 0 || prints[i] != prints[i-1] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n]
}

// normal makes evs comparable with reflect.DeepEqual: UTC times without a
// location pointer of their own, and nil for no fields; sorted by
// fingerprint.
func normal(evs []event.Event) []event.Event {
	out := make([]event.Event, len(evs))
	for i, ev := range evs {
		ev.Time = time.Unix(0, ev.Time.UnixNano()).UTC()
		if len(ev.Fields) == 0 {
			ev.Fields = nil
		}
		out[i] = ev
	}
	byFingerprint(out)
	return out
}

// unpackAll reads back the items and the events left alone, checking
// every item on the way.
func unpackAll(t testing.TB, s Series, window time.Duration, items []storage.Item, alone []event.Event) []event.Event {
	t.Helper()
	var all []event.Event
	for _, it := range items {
		_, size, err := it.Checked()
		require.NoError(t, err)
		require.LessOrEqual(t, size, storage.MaxItemSize)
		require.NoError(t, it.Valid(), "Pack returns checked items")
		require.True(t, IsSortKey(it.SK), it.SK)
		tenant, table, series, shard, err := itemenc.ParsePartitionKey(it.PK)
		require.NoError(t, err)
		require.Equal(t, []any{s.Tenant, s.Table, s.Series}, []any{tenant, table, series})
		require.Less(t, shard, max(s.Shards, 1))
		evs, err := Unpack(nil, it)
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		require.Equal(t, []string{AttrData}, slices.Collect(maps.Keys(it.Attrs)), "a chunk's attributes")
		first, ok := FirstTime(it.SK)
		require.True(t, ok, it.SK)
		require.True(t, evs[0].Time.Equal(first), "the sort key's first time %v, the block's %v", first, evs[0].Time)
		w := int64(window)
		require.Equal(t, windowStart(evs[0].Time, w), windowStart(evs[len(evs)-1].Time, w), "one window per chunk")
		for i := 1; i < len(evs); i++ {
			require.False(t, evs[i].Time.Before(evs[i-1].Time), "block order")
		}
		all = append(all, evs...)
	}
	return append(all, alone...)
}

// roundTrip packs evs and requires them read back exactly, each once,
// and the same items from the events in another order.
func roundTrip(t testing.TB, s Series, window time.Duration, evs []event.Event) []storage.Item {
	t.Helper()
	items, alone, err := Pack(s, window, evs)
	require.NoError(t, err)
	got := unpackAll(t, s, window, items, alone)
	requireSameEvents(t, evs, got)

	shuffled := slices.Clone(evs)
	rand.New(rand.NewPCG(uint64(len(evs)), 7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	again, alone2, err := Pack(s, window, shuffled)
	require.NoError(t, err)
	require.Equal(t, len(alone), len(alone2))
	require.Equal(t, len(items), len(again))
	for i := range items {
		require.Equal(t, items[i].Key(), again[i].Key(), "a retry writes the same keys")
		require.Equal(t, items[i].Attrs, again[i].Attrs, "and the same items")
	}
	return items
}

func at(ns int64) time.Time {
	return time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC).Add(time.Duration(ns))
}

func num(s string) json.Number { return json.Number(s) }

func deep(levels int) any {
	var v any = "bottom"
	for range levels {
		v = []any{map[string]any{"k": v}}
	}
	return v
}

// TestEdgeEvents packs the events whose read-back the row layout
// promises, and requires them back exactly.
func TestEdgeEvents(t *testing.T) {
	thousand := map[string]any{}
	for i := range 1000 {
		thousand[fmt.Sprintf("f%04d", i)] = num(fmt.Sprint(i * 7))
	}
	wide := map[string]any{}
	for i := range 1000 {
		switch i % 4 {
		case 0:
			wide[fmt.Sprintf("w%d", i)] = fmt.Sprintf("v\x00%d", i)
		case 1:
			wide[fmt.Sprintf("w%d", i)] = i%3 == 0
		case 2:
			wide[fmt.Sprintf("w%d", i)] = num(fmt.Sprintf("%d.25", i))
		default:
			wide[fmt.Sprintf("w%d", i)] = nil
		}
	}
	evs := []event.Event{
		{Time: at(0), Fields: map[string]any{"s": "nul\x00inside\x00", "empty": "", "u": "é😀"}},
		{Time: at(0), Fields: map[string]any{"b": true, "c": false}},
		{Time: at(0), Fields: map[string]any{"i": num("-9223372036854775808"), "j": num("9223372036854775807")}},
		{Time: at(0), Fields: map[string]any{"big": num("99999999999999999999999999999999999999"), "tiny": num("0.00000000000000000000000000000000000001")}},
		{Time: at(0), Fields: map[string]any{"max": num("9.9999999999999999999999999999999999999e125"), "min": num("-1e-130")}},
		{Time: at(0), Fields: map[string]any{"f": num("0.1"), "g": num("-2.5"), "h": num("1e21"), "z": num("0")}},
		{Time: at(0), Fields: map[string]any{"n": nil}},
		{Time: at(0)},
		{Time: at(0), ID: "client-1", Fields: map[string]any{"v": num("1")}},
		{Time: at(0), ID: "client-2", Fields: map[string]any{"v": num("1")}},
		{Time: at(1), Fields: map[string]any{"nested": map[string]any{"a": []any{num("1"), "x", nil, true, map[string]any{}}, "e": []any{}}}},
		{Time: at(2), Fields: map[string]any{"deep": deep(15)}},
		{Time: at(3), Fields: thousand},
		{Time: at(4), Fields: wide},
		{Time: at(5), Fields: map[string]any{"mixed": num("1")}},
		{Time: at(6), Fields: map[string]any{"mixed": "one"}},
		{Time: at(7), Fields: map[string]any{"mixed": num("1.5")}},
		{Time: at(8), Fields: map[string]any{"mixed": num("12345678901234567890.5")}},
		{Time: at(int64(time.Hour) - 1), Fields: map[string]any{"late": num("3")}},
		{Time: at(int64(time.Hour)), Fields: map[string]any{"next": num("4")}},
	}
	// Events at one instant: 200 of them, distinct by a counter.
	for i := range 200 {
		evs = append(evs, event.Event{Time: at(9), Fields: map[string]any{"seq": num(fmt.Sprint(i)), "tag": "same"}})
	}
	ok := valid(t, slices.Clone(evs))
	require.Len(t, ok, len(evs), "every edge event is valid")
	items := roundTrip(t, testSeries, time.Hour, ok)
	require.Len(t, items, 2, "two windows, each one chunk")
}

// TestRepeatsPackedOnce: the same event twice in a request, and the same
// client id twice, are packed once.
func TestRepeatsPackedOnce(t *testing.T) {
	ev := event.Event{Time: at(0), Fields: map[string]any{"v": num("1"), "m": map[string]any{"a": "b"}}}
	same := event.Event{Time: at(0), Fields: map[string]any{"m": map[string]any{"a": "b"}, "v": num("1")}}
	other := event.Event{Time: at(0), Fields: map[string]any{"v": num("2")}}
	id1 := event.Event{Time: at(0), ID: "x", Fields: map[string]any{"v": num("1")}}
	id2 := event.Event{Time: at(0), ID: "x", Fields: map[string]any{"v": num("2")}}
	items, alone, err := Pack(testSeries, time.Hour, []event.Event{ev, same, other, id1, id2})
	require.NoError(t, err)
	require.Empty(t, alone)
	got := unpackAll(t, testSeries, time.Hour, items, nil)
	require.Len(t, got, 3)
}

// requireSameEvents requires got to hold each event of want once, as
// fingerprint tells events apart: of the events with one client id at
// one instant, any one.
func requireSameEvents(t testing.TB, want, got []event.Event) {
	t.Helper()
	w, g := normal(distinct(want)), normal(got)
	require.Len(t, g, len(w))
	byPrint := map[string][]event.Event{}
	for _, ev := range normal(want) {
		byPrint[fingerprint(ev)] = append(byPrint[fingerprint(ev)], ev)
	}
	for i := range w {
		gp := fingerprint(g[i])
		require.Equal(t, fingerprint(w[i]), gp)
		require.Contains(t, byPrint[gp], g[i])
	}
}

// TestSizeBound: a window's events past 400 KB are split into chunks
// each under DynamoDB's limit, as DynamoDB sizes items; an event too
// large to be a chunk alone is returned for the row layout.
func TestSizeBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	letters := func(n int) string {
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	var evs []event.Event
	for i := range 20 {
		evs = append(evs, event.Event{Time: at(int64(i)), Fields: map[string]any{"blob": letters(30_000)}})
	}
	items := roundTrip(t, testSeries, time.Hour, valid(t, evs))
	require.Greater(t, len(items), 1, "600 KB of events take several chunks")

	// Events whose row items are just under the limit: a chunk takes each
	// or leaves it alone, never over the limit, never lost.
	rowMax := storage.MaxItemSize - storage.ItemSize(itemenc.RowItem(testSeries.Tenant, testSeries.Table, event.Event{Time: at(0), Series: testSeries.Series, ID: strings.Repeat("i", 11)}, 0)) - len("blob")
	big := []event.Event{
		// With its client id, whose bytes the block adds to the key's, the
		// incompressible one's chunk is larger than its row.
		{Time: at(1), ID: strings.Repeat("i", 11), Fields: map[string]any{"blob": random(rowMax)}},
		{Time: at(2), Fields: map[string]any{"blob": strings.Repeat("z", rowMax)}},
	}
	big = valid(t, big)
	require.Len(t, big, 2)
	items, alone, err := Pack(testSeries, time.Hour, big)
	require.NoError(t, err)
	got := unpackAll(t, testSeries, time.Hour, items, alone)
	require.Equal(t, normal(distinct(big)), normal(got))
	require.Len(t, alone, 1, "the incompressible one is a row")
	require.Len(t, items, 1, "the compressible one a chunk")
}

func TestCorruptChunks(t *testing.T) {
	items, _, err := Pack(testSeries, time.Hour, valid(t, genEvents(rand.New(rand.NewPCG(5, 6)), 50)))
	require.NoError(t, err)
	it := items[0]
	data := it.Attrs[AttrData].([]byte)
	block, err := decompress(data)
	require.NoError(t, err)
	for _, bad := range [][]byte{
		nil, {9}, {storedZstd, 1, 2, 3}, {storedZstdBare, 1, 2, 3}, {storedS2, 0xff, 0xff, 0xff, 0xff, 0x7f}, {storedS2, 5, 1},
		{storedRaw}, {storedRaw, 2}, {storedRaw, 3, 1}, {storedRaw, 2, 0}, {storedRaw, 2, 2, 19, 0, 0, 0},
		append([]byte{storedRaw}, block[:len(block)-1]...), append(append([]byte{storedRaw}, block...), 0),
	} {
		c := it
		c.Attrs = map[string]any{AttrData: bad}
		_, err := Unpack(nil, c)
		require.ErrorIs(t, err, ErrCorrupt, "%x", bad)
	}
	_, err = Unpack(nil, storage.Item{PK: it.PK, SK: it.SK})
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = Unpack(nil, storage.Item{PK: it.PK, SK: "2026-13-01T00:00:00.000000000Z\"x", Attrs: it.Attrs})
	require.ErrorIs(t, err, ErrCorrupt, "a version 2 block takes its first time from the sort key")
}

func TestPackRefuses(t *testing.T) {
	_, _, err := Pack(testSeries, 0, nil)
	require.Error(t, err)
	_, _, err = Pack(testSeries, time.Hour, []event.Event{{Time: at(0), Fields: map[string]any{"x": 1.5}}})
	require.ErrorContains(t, err, "float64")
	_, _, err = Pack(testSeries, time.Hour, []event.Event{{Time: at(0), Fields: map[string]any{"x": num("1e3")}}})
	require.ErrorContains(t, err, "canonical")
}

// TestSortKeysOrder: a chunk's sort key, short or long, sorts with the
// rows and map items of its window, and inside the range a read of the
// window takes (LowKey to HighKey); a short key sorts before every item
// of its window and after every item of the windows before.
func TestSortKeysOrder(t *testing.T) {
	sum := bytes.Repeat([]byte{0xff}, 32)
	for _, window := range []time.Duration{time.Second, 10 * time.Minute, time.Hour, 3 * time.Hour, 24 * time.Hour} {
		for _, tm := range []time.Time{at(123456789), at(0), time.Date(2026, 10, 10, 10, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)} {
			start := WindowStart(tm, window)
			for _, sk := range []string{string(appendSortKey(nil, start, tm, sum)), longSortKey(tm, sum)} {
				require.True(t, IsSortKey(sk), sk)
				first, ok := FirstTime(sk)
				require.True(t, ok, sk)
				require.True(t, tm.Equal(first), "%s: %v", sk, first)
				require.LessOrEqual(t, LowKey(tm, window), sk)
				require.Less(t, sk, itemenc.HighKey(tm))
				require.Greater(t, sk, itemenc.HighKey(start.Add(-1)), "after the window before")
				require.Less(t, sk, LowKey(start.Add(window), window), "before the next window")
				require.Less(t, sk, itemenc.SortKey(tm, "!"))
				require.False(t, itemenc.IsMapSortKey(sk))
				require.False(t, itemenc.IsRowSortKey(sk))
			}
			short := string(appendSortKey(nil, start, tm, sum))
			require.Less(t, short, itemenc.MapSortKey(itemenc.Millisecond(start), 0), "before the window's map items")
			require.Less(t, short, itemenc.SortKey(start, "!"), "before the window's rows")
			require.Greater(t, short, itemenc.HighKey(start.Add(-1)))
			require.Less(t, len(short), len(longSortKey(tm, sum)))
		}
	}
	tm := at(123456789)
	require.False(t, IsSortKey(itemenc.SortKey(tm, "id")))
	require.False(t, IsSortKey(itemenc.SortKey(tm, `"id`)), "a row's id may hold the separator")
	require.False(t, IsSortKey(itemenc.MapSortKey(tm, 0)))
	require.False(t, IsSortKey(itemenc.SeriesIndexPrefix+`a"bcdefghijklmnopq`))
	require.False(t, IsSortKey(`2026-12-06T1"short`))
}

// TestOffsets: an offset from a window's start reads back as written,
// in as few characters as its decimal zeros allow, offsets sort as
// their encodings do, and a form appendOffset would not write is
// refused.
func TestOffsets(t *testing.T) {
	for _, c := range []struct {
		ns   uint64
		text string
	}{{0, "A"}, {1, "Bb"}, {7, "Bn"}, {10, "Cb"}, {37e9, "Lgn"}, {1007e8, "Mcaan"}, {3599999999999, "Ngkssssssssssr"}, {86399e9, "Oqmgsr"}, {math.MaxUint64, "Ucqiimoiiaogoaskkcmcj"}} {
		s := string(appendOffset(nil, c.ns))
		require.Equal(t, c.text, s, "%d", c.ns)
		got, ok := parseOffset(s)
		require.True(t, ok, s)
		require.Equal(t, c.ns, got)
	}
	r := rand.New(rand.NewPCG(7, 8))
	var prev string
	for i := range 20000 {
		ns := uint64(i)
		switch i % 3 {
		case 1:
			ns = r.Uint64N(86400e9)
		case 2:
			ns = r.Uint64N(86400) * uint64(math.Pow10(int(r.IntN(10))))
		}
		s, p := string(appendOffset(nil, ns)), string(appendOffset(nil, ns+1))
		require.Less(t, s, p, "%d and %d", ns, ns+1)
		got, ok := parseOffset(s)
		require.True(t, ok, s)
		require.Equal(t, ns, got)
		if prev != "" {
			a, _ := parseOffset(prev)
			require.Equal(t, a < ns, prev < s, "%d (%s) and %d (%s)", a, prev, ns, s)
		}
		prev = s
	}
	for _, bad := range []string{"", "Ab", "B", "Ba", "Bc", "Cab", "Cbb", "Bcb", "Bbb", "x", "U" + strings.Repeat("s", 19) + "r", "Zb"} {
		_, ok := parseOffset(bad)
		require.False(t, ok, bad)
	}
}

// TestSortKeysOrderAsFirstTimes: the chunks of a window, as requests of
// a few readings each make them, sort by their sort keys as by their
// first events' times, as long keys did: an aggregate folds a window's
// chunks from their columns only when, in key order, each one's last
// event comes before the next one's first.
func TestSortKeysOrderAsFirstTimes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, window := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour} {
		start := WindowStart(testNow, window)
		type keyed struct {
			sk    string
			first time.Time
		}
		var ks []keyed
		for range 300 {
			var evs []event.Event
			first := start.Add(time.Duration(r.Int64N(int64(window))))
			switch r.IntN(3) {
			case 0:
				first = first.Truncate(time.Second)
			case 1:
				first = first.Truncate(time.Millisecond)
			}
			for i := range 1 + r.IntN(5) {
				if t := first.Add(time.Duration(i) * time.Second); t.Before(start.Add(window)) {
					evs = append(evs, event.Event{Time: t, Series: testSeries.Series, Fields: map[string]any{"v": num(strconv.Itoa(r.IntN(100)))}})
				}
			}
			items, _, err := Pack(testSeries, window, evs)
			require.NoError(t, err)
			require.Len(t, items, 1)
			f, ok := FirstTime(items[0].SK)
			require.True(t, ok)
			require.True(t, f.Equal(first))
			ks = append(ks, keyed{items[0].SK, first})
		}
		slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.sk, b.sk) })
		for i := 1; i < len(ks); i++ {
			require.False(t, ks[i].first.Before(ks[i-1].first), "%s (%v) sorts after %s (%v)", ks[i].sk, ks[i].first, ks[i-1].sk, ks[i-1].first)
		}
	}
}

// FuzzSortKey: any sort key is read without a panic, and a chunk key
// that reads back writes again as itself.
func FuzzSortKey(f *testing.F) {
	f.Add(`2026-12-06T1"McaanKxjIf9yxTOE`)
	f.Add(`2026-12-06T10:00:00.000000000Z"Qm9vLXNoYXI`)
	f.Add(`2026-12-1"AKxjIf9yxTOE`)
	f.Add(`2026-12-06T10:00:00.000000000Z#id`)
	f.Fuzz(func(t *testing.T, sk string) {
		first, ok := FirstTime(sk)
		_, _ = KeyTime(sk)
		if !ok || strings.IndexByte(sk, SortKeySep) == itemenc.TimeKeyLen {
			return
		}
		i := strings.IndexByte(sk, SortKeySep)
		start, ok := itemenc.ParseTimePrefix(sk[:i])
		require.True(t, ok)
		sum, err := base64.RawURLEncoding.DecodeString(sk[len(sk)-sumChars:])
		if err != nil || base64.RawURLEncoding.EncodeToString(sum) != sk[len(sk)-sumChars:] {
			return // a sum no writer makes, read all the same
		}
		require.Equal(t, sk, string(appendSortKey(nil, start, first, sum)))
	})
}
