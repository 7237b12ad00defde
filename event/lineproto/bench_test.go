package lineproto_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// body returns n lines of 100 series, the shape of make bench's events.
func body(n int) []byte {
	var b strings.Builder
	base := now.Add(-time1h).UnixNano()
	for i := range n {
		fmt.Fprintf(&b, "sensors,dev=dev-%04d hum=%d,note=\"%s\",pres=10%02d.%02d,status=\"ok\",temp=%d.%02d %d\n",
			i%100, 30+i%60, strings.Repeat("x", 60), i%30, i%100, 15+i%20, i%100, base+int64(i)*1e6)
	}
	return []byte(b.String())
}

const time1h = 3600 * 1e9

func BenchmarkDecode(b *testing.B) {
	in := body(5000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lineproto.Decode(in, lineproto.Options{Now: now}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*5000)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkDecodeNDJSON is the JSON decoder on the same events, for
// comparison.
func BenchmarkDecodeNDJSON(b *testing.B) {
	tables, err := lineproto.Decode(body(5000), lineproto.Options{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for i := range tables[0].Events.Len() {
		e := tables[0].Events.Event(i)
		fmt.Fprintf(&sb, `{"time":%q,"series":%q,"fields":{"hum":%s,"note":%q,"pres":%s,"status":"ok","temp":%s}}`+"\n",
			e.Time.Format("2006-01-02T15:04:05.999999999Z"), e.Series, e.Fields["hum"], e.Fields["note"], e.Fields["pres"], e.Fields["temp"])
	}
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := event.DecodeNDJSON(in, event.Limits{}, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*5000)/b.Elapsed().Seconds(), "lines/s")
}
