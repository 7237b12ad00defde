package chunk

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// guideEvents returns n readings of one device in the shape of the
// engine's benchmarks, whose row items are the AWS guide's 180 bytes:
// a temperature, humidity and pressure that drift, a status, and a
// 60-character note; a reading every 10 seconds with a few milliseconds
// of jitter, as an agent like Telegraf sends them.
func guideEvents(n int) []event.Event {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	temp, hum, pres := 215, 40, 101325
	evs := make([]event.Event, n)
	for i := range evs {
		temp += r.IntN(3) - 1
		hum += r.IntN(3) - 1
		pres += r.IntN(21) - 10
		status := "ok"
		if r.IntN(50) == 0 {
			status = "warn"
		}
		evs[i] = event.Event{
			Time:   from.Add(time.Duration(i)*10*time.Second + time.Duration(r.IntN(5))*time.Millisecond),
			Series: "dev-0001",
			Fields: map[string]any{
				"temp":   json.Number(strconv.FormatFloat(float64(temp)/10, 'f', -1, 64)),
				"hum":    json.Number(strconv.Itoa(hum)),
				"pres":   json.Number(strconv.FormatFloat(float64(pres)/100, 'f', -1, 64)),
				"status": status,
				"note":   strings.Repeat("x", 60),
			},
		}
	}
	return evs
}

// BenchmarkPack packs a device's readings into chunks, 10 a chunk (one
// Telegraf flush) and 360 (an hour), and reports the bytes per event of
// the chunk items as DynamoDB sizes them (item-B/event), and the write
// units DynamoDB charges for putting them (a unit per KB of an item,
// WCU/event), beside the bytes of the same events as rows (row-B/event,
// with 11-character ids), which cost a unit each.
func BenchmarkPack(b *testing.B) {
	s := Series{Tenant: "bench", Table: "t", Series: "dev-0001", Shards: 1}
	for _, n := range []int{10, 360} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			evs := guideEvents(n)
			rowBytes := 0
			for _, ev := range evs {
				ev.ID = "AAAAAAAAAAA"
				rowBytes += storage.ItemSize(itemenc.RowItem(s.Tenant, s.Table, ev, 0))
			}
			var items []storage.Item
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if items, _, err = Pack(s, 24*time.Hour, evs); err != nil {
					b.Fatal(err)
				}
			}
			size, units := 0, 0
			for _, it := range items {
				size += storage.ItemSize(it)
				units += (storage.ItemSize(it) + 1023) / 1024
			}
			b.ReportMetric(float64(size)/float64(n), "item-B/event")
			b.ReportMetric(float64(units)/float64(n), "WCU/event")
			b.ReportMetric(float64(rowBytes)/float64(n), "row-B/event")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}

// BenchmarkUnpack reads back an hour's chunk of a device's readings.
func BenchmarkUnpack(b *testing.B) {
	s := Series{Tenant: "bench", Table: "t", Series: "dev-0001", Shards: 1}
	const n = 360
	items, _, err := Pack(s, 24*time.Hour, guideEvents(n))
	if err != nil || len(items) != 1 {
		b.Fatal(err, len(items))
	}
	var evs []event.Event
	b.ReportAllocs()
	for b.Loop() {
		if evs, err = Unpack(evs[:0], items[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}
