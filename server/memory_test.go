package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/memtest"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// Memory is bounded in what the server builds from requests, not only
// in their bytes: many concurrent writes of many small events, and a few
// bodies of the largest size, keep the Go heap (runtime/metrics, sampled
// every 5 ms) under 512 MiB, objects and garbage together, what the
// last collection found live under 384 MiB, and the process's peak
// resident memory (VmHWM, reset before each case) under 512 MiB, with
// the soft memory limit a deployment of 512 MiB sets (GOMEMLIMIT=352MiB:
// the Go heap's part, Pebble's two memtables of 64 MiB and its cache
// being outside it, docs/operations.md); every event of every
// acknowledged request is stored. The clients generate their bodies as
// they send them, so that the figure is the server's (their buffers are
// in the same process: the bound is the stricter for it). With -short
// the cases are a quarter of the size, as scripts/test.sh runs them;
// make bench's limits part measures the full size on the server binary.
func TestMemoryIsBoundedInWhatRequestsHold(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what memory holds and how fast it goes")
	}
	memtest.ResetPeak(t)
	// As a deployment does with GOMEMLIMIT (docs/operations.md): the
	// budgets bound what is live, the soft limit how far garbage may
	// grow past it.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(352 << 20))
	scale := 1
	if testing.Short() {
		scale = 4
	}
	unlimited := tenant.Limits{WriteEventsPerSecond: 1e12, WriteBytesPerSecond: 1e12, WriteEventsBurst: 1 << 30, WriteBytesBurst: 1 << 30, MaxConcurrentWrites: 1000}
	f := newFixture(t, server.Options{TenantShare: 1, TenantLimits: unlimited})
	for _, c := range []struct {
		name               string
		requests, perEvent int
		events             int
	}{
		// 64 requests of 100,000 minimal events (3.6 MiB each).
		{"many-small-events", 64 / scale, 0, 100_000},
		// 16 bodies of 15 MiB: 91,980 events of 171 bytes.
		{"largest-bodies", 16 / scale, 100, 91_980},
		// 16 bodies of 15 MiB of events whose one field is an array of
		// 100,000 one-digit numbers, the shape that decodes to the most.
		{"arrays-of-tiny-numbers", 16 / scale, -1, 78},
		// 16 bodies of 15 MiB of events of 1,000 one-digit fields.
		{"many-tiny-fields", 16 / scale, -2, 1_700},
	} {
		t.Run(c.name, func(t *testing.T) {
			debug.FreeOSMemory()
			before := memtest.PeakRSS(t)
			memtest.ResetPeak(t)
			heap := memtest.SampleHeap(5*time.Millisecond, memtest.HeapObjects, memtest.HeapLive)
			table := "mem-" + c.name
			var wg sync.WaitGroup
			written := make([]int, c.requests)
			for r := range c.requests {
				wg.Go(func() {
					// A client sends its request again after a 503 or a
					// 429, as Retry-After asks, or when the connection
					// broke; its events are the same.
					for range 1000 {
						status, n, err := postGenerated(f, table, &eventBody{first: r * c.events, n: c.events, pad: c.perEvent})
						if err != nil {
							// The server answered 503 and closed the
							// connection before the client sent all:
							// not acknowledged, sent again.
							time.Sleep(100 * time.Millisecond)
							continue
						}
						switch status {
						case http.StatusOK:
							written[r] = n
							return
						case http.StatusServiceUnavailable, http.StatusTooManyRequests:
							time.Sleep(100 * time.Millisecond)
						default:
							t.Errorf("request %d: status %d", r, status)
							return
						}
					}
				})
			}
			wg.Wait()
			peak := memtest.PeakRSS(t)
			peakHeap := heap()
			objects, live := peakHeap[0], peakHeap[1]
			acked := 0
			for _, n := range written {
				acked += n
			}
			t.Logf("%d requests of %d events: %d acknowledged; peak heap objects %d MiB, live after a collection %d MiB; peak RSS %d MiB (before: %d MiB)", c.requests, c.events, acked, objects>>20, live>>20, peak>>20, before>>20)
			require.Less(t, objects, uint64(512<<20), "peak heap objects %d MiB", objects>>20)
			require.Less(t, live, uint64(384<<20), "peak live heap %d MiB", live>>20)
			require.Less(t, peak, int64(512<<20), "peak RSS %d MiB", peak>>20)
			require.Equal(t, c.requests*c.events, acked, "every request is written in the end")
			require.Equal(t, int64(acked), storedEvents(t, f, table), "every acknowledged event is stored")
		})
	}
}

// postGenerated sends a generated body as NDJSON with acme's key, and
// returns the status and the events written.
func postGenerated(f *fixture, table string, body io.Reader) (int, int, error) {
	req, err := http.NewRequest("POST", f.url+"/v1/tables/"+table+"/events", body)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+f.acme)
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return res.StatusCode, 0, err
	}
	var w struct{ Written int }
	return res.StatusCode, w.Written, json.Unmarshal(b, &w)
}

// eventBody generates n NDJSON events, one a millisecond from event
// first on, each with pad bytes of a field when pad > 0, an array of
// 100,000 one-digit numbers when pad is -1, and 1,000 fields of one
// digit when pad is -2.
type eventBody struct {
	first, n, pad, i int // events first to first+n-1; i generated
	buf              bytes.Buffer
}

// base is the time of the generated events' first.
var base = now.Add(-6 * time.Hour)

func (b *eventBody) Read(p []byte) (int, error) {
	for b.buf.Len() < len(p) && b.i < b.n {
		k := b.first + b.i
		ms := base.Add(time.Duration(k) * time.Millisecond).UnixMilli()
		switch {
		case b.pad == -1:
			fmt.Fprintf(&b.buf, `{"time":%d,"series":"s%02d","fields":{"v":%d,"a":[`, ms, k%16, k)
			for range 100_000 - 1 {
				b.buf.WriteString("1,")
			}
			b.buf.WriteString("1]}}\n")
		case b.pad == -2:
			fmt.Fprintf(&b.buf, `{"time":%d,"series":"s%02d","fields":{"v":%d`, ms, k%16, k)
			for f := range 999 {
				fmt.Fprintf(&b.buf, `,"f%03d":1`, f)
			}
			b.buf.WriteString("}}\n")
		case b.pad > 0:
			fmt.Fprintf(&b.buf, `{"time":%d,"series":"s%02d","fields":{"v":1%07d,"pad":"%0*d"}}`+"\n", ms, k%16, k, b.pad, k)
		default:
			fmt.Fprintf(&b.buf, `{"time":%d,"series":"s%02d"}`+"\n", ms, k%16)
		}
		b.i++
	}
	if b.buf.Len() == 0 {
		return 0, io.EOF
	}
	return b.buf.Read(p)
}

// storedEvents counts a table's events of acme.
func storedEvents(t *testing.T, f *fixture, table string) int64 {
	t.Helper()
	buckets, err := f.db.Aggregate(context.Background(), "acme", engine.AggregateQuery{Table: table, From: base, To: now, Bucket: 24 * time.Hour, Funcs: []string{"count"}})
	require.NoError(t, err)
	var n int64
	for _, b := range buckets {
		n += b.Events
	}
	return n
}
