package admission_test

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// liveHeap returns the bytes of the heap live after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The estimate of decoded events is never below what decoding really
// holds: the live heap a decoded batch keeps, measured at two sizes for
// the smallest events of each format and for events of many tiny values,
// whose growth between the sizes is what an event holds, whatever the
// decoder shares. The estimate is above it by what the engine builds
// from a span of events while it writes them.
func TestBatchBytesIsNotBelowWhatDecodedEventsHold(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ms := now.Add(-time.Hour).UnixMilli()
	shapes := []struct {
		name         string
		small, large int
		body         func(n int) []byte
		decode       func(body []byte) (event.Batch, error)
	}{
		{"ndjson, one field", 5_000, 20_000, func(n int) []byte {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, `{"series":"s","time":%d,"fields":{"a":1}}`+"\n", ms-int64(i))
			}
			return []byte(b.String())
		}, func(body []byte) (event.Batch, error) { return event.DecodeNDJSON(body, event.Limits{}, now) }},
		{"line protocol, one field", 5_000, 20_000, func(n int) []byte {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "m a=1 %d\n", (ms-int64(i))*int64(time.Millisecond))
			}
			return []byte(b.String())
		}, func(body []byte) (event.Batch, error) {
			tables, err := lineproto.Decode(body, lineproto.Options{Now: now})
			if err != nil {
				return event.Batch{}, err
			}
			return tables[0].Events, nil
		}},
		{"json, arrays of small numbers", 500, 2_000, func(n int) []byte {
			var b strings.Builder
			b.WriteByte('[')
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"time":%d,"fields":{"a":[%s1]}}`, ms-int64(i), strings.Repeat("1,", 100))
			}
			b.WriteByte(']')
			return []byte(b.String())
		}, func(body []byte) (event.Batch, error) { return event.DecodeJSON(body, event.Limits{}, now) }},
	}
	for _, shape := range shapes {
		t.Run(shape.name, func(t *testing.T) {
			held := func(n int) (live, estimate int64) {
				body := shape.body(n)
				before := liveHeap()
				batch, err := shape.decode(body)
				require.NoError(t, err)
				require.Equal(t, n, batch.Len())
				after := liveHeap()
				runtime.KeepAlive(batch)
				runtime.KeepAlive(body)
				return int64(after) - int64(before), admission.BatchBytes(batch)
			}
			smallLive, smallEstimate := held(shape.small)
			largeLive, largeEstimate := held(shape.large)
			perEventLive := float64(largeLive-smallLive) / float64(shape.large-shape.small)
			perEventEstimate := float64(largeEstimate-smallEstimate) / float64(shape.large-shape.small)
			t.Logf("an event holds %.0f bytes decoded, estimated at %.0f", perEventLive, perEventEstimate)
			require.GreaterOrEqual(t, perEventEstimate, perEventLive)
			require.GreaterOrEqual(t, largeEstimate, largeLive)
		})
	}
}

// A minimal event, {"time":…,"series":"s1","fields":{"v":1}}, is
// estimated at no more than 100 bytes, the growth of BatchBytes between
// two sizes of request; a request of the most events one may hold
// (DefaultMaxRequestEvents) of them, and one of DefaultMaxRequestBytes
// of the shapes that decode to the most (arrays of one-digit numbers,
// many one-digit fields), fit the default budget of decoded events
// before decoding (BodyBytes: a request over its tenant's share gets in
// while its tenant holds nothing else) and one tenant's share of it
// after (BatchBytes), so that an idle server never refuses them.
func TestMinimalEventsAndLargestShapesFitTheDefaultBudget(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ms := now.Add(-time.Hour).UnixMilli()
	share := int64(admission.DefaultMaxEventBytes * admission.DefaultTenantShare)
	minimal := func(n int) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"time":%d,"series":"s1","fields":{"v":1}}`+"\n", ms-int64(i))
		}
		return []byte(b.String())
	}
	fits := func(t *testing.T, body []byte) event.Batch {
		t.Helper()
		require.LessOrEqual(t, len(body), admission.DefaultMaxRequestBytes)
		before := admission.BodyBytes(body, admission.NDJSON)
		batch, err := event.DecodeNDJSON(body, event.Limits{}, now)
		require.NoError(t, err)
		after := admission.BatchBytes(batch)
		t.Logf("%d events, %d bytes: estimated at %d bytes before decoding, %d after", batch.Len(), len(body), before, after)
		require.LessOrEqual(t, before, int64(admission.DefaultMaxEventBytes))
		require.LessOrEqual(t, after, share)
		require.LessOrEqual(t, after, before)
		return batch
	}
	small, large := fits(t, minimal(10_000)), fits(t, minimal(admission.DefaultMaxRequestEvents))
	perEvent := float64(admission.BatchBytes(large)-admission.BatchBytes(small)) / float64(large.Len()-small.Len())
	t.Logf("a minimal event is estimated at %.0f bytes; %d bytes for %d", perEvent, admission.BatchBytes(large), large.Len())
	require.LessOrEqual(t, perEvent, 100.0)
	require.LessOrEqual(t, admission.BatchBytes(large), int64(100*large.Len()))

	// Events of arrays of one-digit numbers, each within DynamoDB's item
	// size, up to the largest body.
	var b strings.Builder
	for i := 0; b.Len() < admission.DefaultMaxRequestBytes-300_000; i++ {
		fmt.Fprintf(&b, `{"time":%d,"fields":{"a":[%s1]}}`+"\n", ms-int64(i), strings.Repeat("1,", 120_000))
	}
	fits(t, []byte(b.String()))
	// Events of 1,000 fields of one digit each, up to the largest body.
	b.Reset()
	for i := 0; b.Len() < admission.DefaultMaxRequestBytes-20_000; i++ {
		fmt.Fprintf(&b, `{"time":%d,"fields":{`, ms-int64(i))
		for f := range 1000 {
			if f > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%03d":1`, f)
		}
		b.WriteString("}}\n")
	}
	fits(t, []byte(b.String()))
	// Minimal events up to the largest body exceed DefaultMaxRequestEvents:
	// the smallest request of that many fits too.
	require.LessOrEqual(t, admission.SmallestRequestBytes(admission.DefaultMaxRequestEvents), share)
}

// The estimate made before decoding is an upper bound of the one made
// after, in every format, for the shapes whose fields take the most for
// their text: one-character keys of one-digit numbers and booleans,
// tags kept as fields, one long event among small ones (which the
// longest line bounds), and a body of a single event.
func TestBodyBytesIsAnUpperBound(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ns := now.Add(-time.Hour).UnixNano()
	ms := ns / 1e6
	decodeLines := func(body []byte) ([]event.Batch, error) {
		tables, err := lineproto.Decode(body, lineproto.Options{Now: now})
		var out []event.Batch
		for _, t := range tables {
			out = append(out, t.Events)
		}
		return out, err
	}
	decodeNDJSON := func(body []byte) ([]event.Batch, error) {
		b, err := event.DecodeNDJSON(body, event.Limits{}, now)
		return []event.Batch{b}, err
	}
	decodeJSON := func(body []byte) ([]event.Batch, error) {
		b, err := event.DecodeJSON(body, event.Limits{}, now)
		return []event.Batch{b}, err
	}
	repeat := func(n int, line func(i int) string) []byte {
		var b strings.Builder
		for i := range n {
			b.WriteString(line(i))
		}
		return []byte(b.String())
	}
	for _, c := range []struct {
		name   string
		format admission.Format
		body   []byte
		decode func([]byte) ([]event.Batch, error)
	}{
		{"ndjson, no fields", admission.NDJSON, repeat(20_000, func(i int) string { return fmt.Sprintf(`{"time":%d}`+"\n", ms-int64(i)) }), decodeNDJSON},
		{"ndjson, one-digit fields", admission.NDJSON, repeat(3_000, func(i int) string {
			return fmt.Sprintf(`{"time":%d,"fields":{%s}}`+"\n", ms-int64(i), manyFields(40))
		}), decodeNDJSON},
		{"ndjson, one long event among small ones", admission.NDJSON, repeat(3_000, func(i int) string {
			if i == 1500 {
				return fmt.Sprintf(`{"time":%d,"fields":{"a":[%s1]}}`+"\n", ms-int64(i), strings.Repeat("1,", 100_000))
			}
			return fmt.Sprintf(`{"time":%d,"fields":{"a":1}}`+"\n", ms-int64(i))
		}), decodeNDJSON},
		{"json, one event", admission.JSON, []byte(fmt.Sprintf(`[{"time":%d,"fields":{"a":[%s1]}}]`, ms, strings.Repeat("1,", 200_000))), decodeJSON},
		{"ndjson, numbers of 126 digits just within event.DecodedTextBound", admission.NDJSON, repeat(3_000, func(i int) string {
			return fmt.Sprintf(`{"time":%d,"fields":{"s":%q,"v":[1e125,1e125]}}`+"\n", ms-int64(i), strings.Repeat("x", 200))
		}), decodeNDJSON},
		{"json, a small body of numbers of 132 characters", admission.JSON, []byte(fmt.Sprintf(`[{"time":%d,"fields":{"a":[%s1e-130]}}]`, ms, strings.Repeat("1e-130,", 50))), decodeJSON},
		{"line protocol, numbers of 126 digits", admission.LineProtocol, repeat(3_000, func(i int) string {
			return fmt.Sprintf("m s=%q,a=1e125,b=1e125 %d\n", strings.Repeat("x", 200), ns-int64(i))
		}), decodeLines},
		{"line protocol, one-digit fields", admission.LineProtocol, repeat(20_000, func(i int) string { return fmt.Sprintf("m a=1,b=t,c=1i %d\n", ns-int64(i)) }), decodeLines},
		{"line protocol, tags, no timestamp, a table a line", admission.LineProtocol, repeat(20_000, func(i int) string { return fmt.Sprintf("m%d,a=b,c=d e=1\n", i) }), decodeLines},
		{"line protocol, one long line", admission.LineProtocol, repeat(1_000, func(i int) string {
			if i == 500 {
				return "m " + strings.ReplaceAll(strings.ReplaceAll(manyFields(999), `"`, ""), ":", "=") + "\n"
			}
			return fmt.Sprintf("m a=1 %d\n", ns-int64(i))
		}), decodeLines},
	} {
		t.Run(c.name, func(t *testing.T) {
			batches, err := c.decode(c.body)
			require.NoError(t, err)
			var after int64
			for _, b := range batches {
				after += admission.BatchBytes(b)
			}
			before := admission.BodyBytes(c.body, c.format)
			t.Logf("%d bytes: estimated at %d before decoding, %d after", len(c.body), before, after)
			require.GreaterOrEqual(t, before, after)
		})
	}
}

// manyFields returns n fields of one-digit numbers with keys of their
// own, as a JSON object's members: "f0":1,"f1":1,….
func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%s":1`, strconv.FormatInt(int64(i), 36))
	}
	return b.String()
}
