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

// requestEvents returns the events of one request of the shape `make
// bench`'s chunks part writes (bench/internal/bench, generator): perSeries
// readings of each of series series, a reading of every series in turn
// each step/series, starting with reading from; their numbers
// canonical, as a request's are once checked.
func requestEvents(series, perSeries, from int, step time.Duration) []event.Event {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	evs := make([]event.Event, series*perSeries)
	for j := range evs {
		i := from + j
		num := func(s string) json.Number {
			n, err := storage.CanonicalNumber(s)
			if err != nil {
				panic(err)
			}
			return n
		}
		evs[j] = event.Event{
			Time:   start.Add(time.Duration(i) * step / time.Duration(series)),
			Series: fmt.Sprintf("dev-%04d", i%series),
			Fields: map[string]any{
				"temp":   num(fmt.Sprintf("%d.%02d", 15+i%20, i%100)),
				"hum":    num(fmt.Sprint(30 + i%60)),
				"pres":   num(fmt.Sprintf("10%02d.%02d", i%30, i%100)),
				"status": "ok",
				"note":   strings.Repeat("x", 70),
			},
		}
	}
	return evs
}

// BenchmarkPackRequestShapes packs the requests of `make bench`'s chunks
// part, a chunk per series and request, and reports the bytes DynamoDB
// stores per event for the chunk items (their size and 100 bytes of
// indexing each; stored-B/event) and the items' size alone (item-B/event).
func BenchmarkPackRequestShapes(b *testing.B) {
	for _, shape := range []struct {
		name              string
		series, perSeries int
		step              time.Duration
	}{
		{"5000-over-1000", 1000, 5, time.Second},
		{"telegraf", 100, 10, 10 * time.Second},
	} {
		b.Run(shape.name, func(b *testing.B) {
			evs := requestEvents(shape.series, shape.perSeries, 3*shape.series*shape.perSeries, shape.step)
			bySeries := map[string][]event.Event{}
			for _, ev := range evs {
				bySeries[ev.Series] = append(bySeries[ev.Series], ev)
			}
			var size, items int
			for b.Loop() {
				size, items = 0, 0
				for name, evs := range bySeries {
					its, _, err := Pack(Series{Tenant: "bench", Table: "sensors", Series: name, Shards: 1}, 24*time.Hour, evs)
					if err != nil {
						b.Fatal(err)
					}
					for _, it := range its {
						size += storage.ItemSize(it)
						items++
					}
				}
			}
			b.ReportMetric(float64(size)/float64(len(evs)), "item-B/event")
			b.ReportMetric(float64(size+100*items)/float64(len(evs)), "stored-B/event")
		})
	}
}
