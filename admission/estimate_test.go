package admission_test

import (
	"fmt"
	"runtime"
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
// two sizes of request; and a request of the most events one may hold
// (DefaultMaxRequestEvents) of them, and one of DefaultMaxRequestBytes
// of the shapes that decode to the most (arrays of one-digit numbers,
// many one-digit fields), fit one tenant's share of the default budget
// of decoded events before decoding (BodyBytes) and after (BatchBytes),
// so that an idle server never refuses them.
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
	fits := func(t *testing.T, body []byte, lines bool) event.Batch {
		t.Helper()
		require.LessOrEqual(t, len(body), admission.DefaultMaxRequestBytes)
		before := admission.BodyBytes(int64(len(body)), admission.EventsUpperBound(body, lines))
		batch, err := event.DecodeNDJSON(body, event.Limits{}, now)
		require.NoError(t, err)
		after := admission.BatchBytes(batch)
		t.Logf("%d events, %d bytes: estimated at %d bytes before decoding, %d after", batch.Len(), len(body), before, after)
		require.LessOrEqual(t, before, share)
		require.LessOrEqual(t, after, share)
		return batch
	}
	small, large := fits(t, minimal(10_000), true), fits(t, minimal(admission.DefaultMaxRequestEvents), true)
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
	fits(t, []byte(b.String()), true)
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
	fits(t, []byte(b.String()), true)
	// Minimal events up to the largest body exceed DefaultMaxRequestEvents:
	// the smallest request of that many fits too.
	require.LessOrEqual(t, admission.SmallestRequestBytes(admission.DefaultMaxRequestEvents), share)
}
