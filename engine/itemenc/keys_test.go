package itemenc

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPartitionKeyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		tenant, table, series string
		shard                 int
	}{
		{"acme", "a_table", "car-17", 0},
		{"acme", "a_table", "", 3},
		{"acme", "a.b-c", "with#hash#es", 999},
		{"t", "x", "#", 12},
		{"t", "x", "ünïcode", 1},
	} {
		pk := PartitionKey(tc.tenant, tc.table, tc.series, tc.shard)
		tenant, table, series, shard, err := ParsePartitionKey(pk)
		require.NoError(t, err, pk)
		require.Equal(t, tc.tenant, tenant)
		require.Equal(t, tc.table, table)
		require.Equal(t, tc.series, series)
		require.Equal(t, tc.shard, shard)
	}
	for _, bad := range []string{"", "a", "a#b", "a#b#1", "a#b#c#", "a#b#c#x", "a#b#c#01", "a#b#c#-1"} {
		_, _, _, _, err := ParsePartitionKey(bad)
		require.Error(t, err, bad)
	}
}

func TestSortKeyOrderIsTimeOrder(t *testing.T) {
	base := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	keys := []string{
		SortKey(time.Unix(0, 0), "a"),
		SortKey(base, "a"),
		SortKey(base, "ab"),
		SortKey(base, "b"),
		SortKey(base.Add(time.Nanosecond), ""+"0"),
		SortKey(base.Add(time.Microsecond), "a"),
		SortKey(base.Add(time.Millisecond), "a"),
		SortKey(time.Date(2099, 12, 31, 23, 59, 59, 999999999, time.UTC), "z"),
	}
	for i := 1; i < len(keys); i++ {
		require.Less(t, keys[i-1], keys[i])
	}
	// Range bounds: every key of an instant lies in [TimeKey, HighKey].
	k := SortKey(base, "~~~~")
	require.LessOrEqual(t, TimeKey(base), k)
	require.Less(t, k, HighKey(base))
	require.Less(t, HighKey(base), SortKey(base.Add(time.Nanosecond), "!"))
}

func FuzzRowKey(f *testing.F) {
	f.Add("acme", "a_table", "car-17", 3, int64(1491825600123456789), "abc")
	f.Add("t", "x", "#a#", 0, int64(0), "#")
	f.Fuzz(func(t *testing.T, tenant, table, series string, shard int, nanos int64, id string) {
		if !ValidTableName(tenant) || !ValidTableName(table) || shard < 0 || nanos < 0 || id == "" {
			t.Skip()
		}
		pk := PartitionKey(tenant, table, series, shard)
		gt, gtab, gs, gsh, err := ParsePartitionKey(pk)
		require.NoError(t, err)
		require.Equal(t, []any{tenant, table, series, shard}, []any{gt, gtab, gs, gsh})
		ts := time.Unix(0, nanos).UTC()
		sk := SortKey(ts, id)
		gtime, gid, err := ParseSortKey(sk)
		require.NoError(t, err)
		require.True(t, ts.Equal(gtime))
		require.Equal(t, id, gid)
	})
}

func TestParseTimeKeyAgreesWithTimeParse(t *testing.T) {
	for _, s := range []string{
		"1970-01-01T00:00:00.000000000Z", "2017-04-10T12:00:00.123456789Z", "2024-02-29T23:59:59.999999999Z",
		"2023-02-29T00:00:00.000000000Z", "2017-13-01T00:00:00.000000000Z", "2017-04-31T00:00:00.000000000Z",
		"2017-04-10T24:00:00.000000000Z", "2017-04-10 12:00:00.000000000Z", "2017-04-10T12:00:00.00000000xZ",
		"2017-04-10T12:60:00.000000000Z", "2017-00-10T12:00:00.000000000Z",
	} {
		want, err := time.Parse(TimeLayout, s)
		got, ok := ParseTimeKey(s)
		require.Equal(t, err == nil, ok, s)
		if ok {
			require.True(t, want.Equal(got), s)
		}
		requireTimeKeys(t, "2017-04-10T12:00:00.000000000Z", s)
		requireTimeKeys(t, s[:10]+"T01:02:03.000000004Z", s)
	}
}

// FuzzTimeKeys holds TimeKeys, which reads the second of two keys of one
// day by its time of day alone, to time.Parse.
func FuzzTimeKeys(f *testing.F) {
	f.Add("2017-04-10T12:00:00.000000000Z", "2017-04-10T23:59:59.999999999Z")
	f.Add("2024-02-29T00:00:00.000000000Z", "2024-02-29T24:00:00.000000000Z")
	f.Add("2023-02-28T00:00:00.000000000Z", "2023-02-28T12:0x:00.000000000Z")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) != TimeKeyLen || len(b) != TimeKeyLen {
			t.Skip()
		}
		requireTimeKeys(t, a, b)
	})
}

// requireTimeKeys reads a then b with one TimeKeys and requires the
// answers of time.Parse for the keys that are in TimeLayout exactly
// (time.Parse also takes a comma for the point, and signs in the
// fraction), and failure for the others.
func requireTimeKeys(t *testing.T, a, b string) {
	t.Helper()
	var c TimeKeys
	for _, s := range []string{a, b} {
		want, err := time.Parse(TimeLayout, s)
		got, ok := c.Nanos(s)
		require.Equal(t, err == nil && want.Format(TimeLayout) == s, ok, "%s after %s", s, a)
		if ok {
			require.Equal(t, want.UnixNano(), got, "%s after %s", s, a)
		}
	}
}

// TestKeyKindsSort holds the data table's keys to the orders the reads
// rely on (keys.go).
func TestKeyKindsSort(t *testing.T) {
	at := time.Date(2017, 4, 10, 12, 0, 0, 123456789, time.UTC)
	ms := Millisecond(at)
	// Within a series shard, by time; at one instant the millisecond's
	// map items first, then rows, then HighKey; then the next instant.
	inOrder := []string{
		TimeKey(ms.Add(-time.Nanosecond)),
		MapSortKey(ms, 0),
		MapSortKey(ms, 1),
		MapSortKey(ms, 12),
		SortKey(at, "AAAA"),
		SortKey(at, "zzzz"),
		HighKey(at),
		SortKey(at.Add(time.Nanosecond), "AAAA"),
		MapSortKey(ms.Add(time.Millisecond), 0),
	}
	require.True(t, slices.IsSorted(inOrder), "%q", inOrder)
	require.Greater(t, TimeKey(ms), TimeKey(ms.Add(-time.Nanosecond)))
	require.LessOrEqual(t, TimeKey(ms), MapSortKey(ms, 0), "a range from the millisecond's start selects its map items")

	// Only event partitions parse as such, whatever the series holds.
	for _, series := range []string{"", "s", "#", "~v", "#~v", "a#1", "x#~rhour", "s:"} {
		pk := PartitionKey("acme", "a_table", series, 3)
		_, _, got, shard, err := ParsePartitionKey(pk)
		require.NoError(t, err, pk)
		require.Equal(t, series, got)
		require.Equal(t, 3, shard)
		for _, other := range []string{SeriesIndexKey("acme", "a_table"), MarkerKey("acme", "a_table"), RollupKey("acme", "a_table", series, "hour")} {
			_, _, _, _, err := ParsePartitionKey(other)
			require.ErrorIs(t, err, ErrBadKey, "%q parsed as an event partition", other)
			require.NotEqual(t, pk, other)
		}
	}
	require.True(t, IsMapSortKey(MapSortKey(ms, 0)))
	require.False(t, IsMapSortKey(SortKey(at, "x")))
	unit, start, series, ok := ParseMarkerSortKey(MarkerSortKey("day", at, "a#b"))
	require.True(t, ok)
	require.Equal(t, "day", unit)
	require.True(t, start.Equal(at))
	require.Equal(t, "a#b", series)
}

// TestTimeKeyAgreesWithAppendFormat holds the hand-written time key to
// TimeLayout, in every zone and at the ends of the years it writes.
func TestTimeKeyAgreesWithAppendFormat(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	times := []time.Time{
		time.Unix(0, 0), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 1, paris), time.Date(2017, 4, 10, 12, 0, 0, 123456789, time.FixedZone("", -7*3600)),
	}
	for i := range 1000 {
		times = append(times, time.Unix(int64(i)*7919*86_413, int64(i)*104_729%1_000_000_000))
	}
	for _, tm := range times {
		require.Equal(t, tm.UTC().Format(TimeLayout), TimeKey(tm), "%v", tm)
		require.Equal(t, tm.UTC().Format(TimeLayout)+"#id", SortKey(tm, "id"), "%v", tm)
	}
}

// TestAppendKeys: the Append forms of the keys write what PartitionKey
// and SortKey return, after what the buffer holds.
func TestAppendKeys(t *testing.T) {
	at := time.Date(2026, 11, 27, 1, 2, 3, 4, time.UTC)
	for _, shard := range []int{0, 7, 12} {
		require.Equal(t, "x"+PartitionKey("acme", "cars", "car-17", shard), string(AppendPartitionKey([]byte("x"), "acme", "cars", "car-17", shard)))
	}
	require.Equal(t, "x"+SortKey(at, "AAAAAAAAAAA"), string(AppendSortKey([]byte("x"), at, "AAAAAAAAAAA")))
	require.Equal(t, "x"+SortKey(at.In(time.FixedZone("+2", 7200)), ""), string(AppendSortKey([]byte("x"), at.In(time.FixedZone("+2", 7200)), "")))
}

// FuzzTimePrefix holds a time prefix to its promise: it reads back as
// its instant, every time key before the instant's (and a row's or map
// item's key of such a time) sorts before it, and the instant's key and
// every later one after it.
func FuzzTimePrefix(f *testing.F) {
	for _, ns := range []int64{0, 1, 1e9, 36e11, 864e11, 1491825600123456789, 1765015200000000000, 1765015210000000000, 1767225599999999999, 1893456000000000000} {
		f.Add(ns, int64(1))
	}
	f.Add(int64(1765015200000000000), int64(36e11))
	f.Fuzz(func(t *testing.T, ns, d int64) {
		if ns < 0 || d <= 0 {
			t.Skip()
		}
		at := time.Unix(0, ns).UTC()
		p := string(AppendTimePrefix(nil, at))
		got, ok := ParseTimePrefix(p)
		require.True(t, ok, p)
		require.True(t, at.Equal(got), "%s reads back as %v, not %v", p, got, at)
		require.True(t, IsTimePrefix(p))
		require.LessOrEqual(t, p, TimeKey(at))
		require.Less(t, p+`"`, TimeKey(at))
		if ns > 0 {
			before := time.Unix(0, max(ns-d, 0)).UTC()
			require.Less(t, HighKey(before), p, "%v before %v", before, at)
			require.Less(t, MapSortKey(before, 99), p)
		}
		if ns <= math.MaxInt64-d {
			after := TimeKey(time.Unix(0, ns+d).UTC())
			require.Less(t, p+`"~~~~`, after)
		}
	})
}

func TestTimePrefixes(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), "2026-12-06T1"},
		{time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC), "2026-12-06T13"},
		{time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC), "2026-12-06"},
		{time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC), "2026-12-1"},
		{time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), "2030-01-01"},
		{time.Date(2026, 12, 6, 10, 30, 0, 0, time.UTC), "2026-12-06T10:3"},
		{time.Date(2026, 12, 6, 10, 0, 0, 700e6, time.UTC), "2026-12-06T10:00:00.7"},
		{time.Date(2026, 12, 6, 10, 0, 0, 1, time.UTC), "2026-12-06T10:00:00.000000001"},
		{time.Date(2026, 12, 6, 10, 0, 0, 10, time.UTC), "2026-12-06T10:00:00.00000001"},
	} {
		require.Equal(t, c.want, string(AppendTimePrefix(nil, c.at)))
	}
	for _, bad := range []string{"", "2026-12-06T10", "2026-12-06T", "2026-12-", "2026-1", "2026-12-06T1x", "2026-13-01", "2026-02-30", "2026-12-06T10:00:00.000000000Z#"} {
		_, ok := ParseTimePrefix(bad)
		require.False(t, ok, bad)
	}
	got, ok := ParseTimePrefix("2026-12-06T10:00:00.000000000Z")
	require.True(t, ok, "a whole time key")
	require.Equal(t, time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), got)
}
