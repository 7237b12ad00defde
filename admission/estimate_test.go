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
// decoder shares. The estimate is above it by the allowance for the item
// the engine makes of each event while it writes.
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
