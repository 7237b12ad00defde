package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// benchEvent is a typical IoT event of about 180 bytes.
const benchEvent = `{"time":"2017-04-10T12:00:00.123456Z","series":"car-17","fields":{"speed":88.5,"gear":"D","rpm":3200,"lat":48.856613,"lon":2.352222,"engine_on":true,"fuel":0.62}}`

var benchNow = time.Date(2017, 4, 11, 0, 0, 0, 0, time.UTC)

// ndjsonBody returns n events like benchEvent, with the variety of real
// data: unique times and positions, varying speed, rpm and fuel, a gear out
// of four, a hundred cars.
func ndjsonBody(n int) []byte {
	var b bytes.Buffer
	gears := []string{"P", "R", "N", "D"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"time":"2017-04-10T12:%02d:%02d.%06dZ","series":"car-%d","fields":{"speed":%d.%d,"gear":"%s","rpm":%d,"lat":48.%06d,"lon":2.%06d,"engine_on":%t,"fuel":0.%02d}}`+"\n",
			i/60%60, i%60, i*7919%1000000, i%100, 20+i%110, i%10, gears[i/7%4], 800+i*37%5000, 856613+i*13, 352222+i*7, i%5 != 0, 1+i%99)
	}
	return b.Bytes()
}

func BenchmarkDecodeNDJSON(b *testing.B) {
	const n = 1000
	body := ndjsonBody(n)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		evsBatch, err := DecodeNDJSON(body, Limits{}, benchNow)
		if err != nil || evsBatch.Len() != n {
			b.Fatal(err, evsBatch.Len())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	b.ReportMetric(float64(len(body))/n, "bytes/event")
}

// BenchmarkDecodeNDJSONEvents is BenchmarkDecodeNDJSON with every event
// built from the batch's columns afterwards, as a writer builds them:
// the whole cost of an event's decoded form.
func BenchmarkDecodeNDJSONEvents(b *testing.B) {
	const n = 1000
	body := ndjsonBody(n)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		evsBatch, err := DecodeNDJSON(body, Limits{}, benchNow)
		if err != nil || evsBatch.Len() != n {
			b.Fatal(err, evsBatch.Len())
		}
		for i := range evsBatch.Len() {
			if ev := evsBatch.Event(i); len(ev.Fields) != 7 {
				b.Fatal(ev)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

func BenchmarkDecodeJSON(b *testing.B) {
	const n = 1000
	body := bytes.ReplaceAll(bytes.TrimSuffix(ndjsonBody(n), []byte("\n")), []byte("\n"), []byte(","))
	body = append(append([]byte("["), body...), ']')
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		evsBatch, err := DecodeJSON(body, Limits{}, benchNow)
		if err != nil || evsBatch.Len() != n {
			b.Fatal(err, evsBatch.Len())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

// BenchmarkDecodeValidateAssignID is the whole cost of an event on ingest
// before storage: decode, validate, id.
func BenchmarkDecodeValidateAssignID(b *testing.B) {
	const n = 1000
	body := ndjsonBody(n)
	b.ReportAllocs()
	for b.Loop() {
		evsBatch, err := DecodeNDJSON(body, Limits{}, benchNow)
		if err != nil {
			b.Fatal(err)
		}
		evsBatch.AssignIDs("tenant-1", "a_table", LatestIDScheme)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

func BenchmarkAssignID(b *testing.B) {
	evsBatch, err := DecodeNDJSON([]byte(benchEvent), Limits{}, benchNow)
	evs := evsBatch.Events()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []IDScheme{IDScheme1, IDScheme2} {
		b.Run(fmt.Sprint("scheme=", int(s)), func(b *testing.B) {
			ev := evs[0]
			b.ReportAllocs()
			for b.Loop() {
				ev.ID = ""
				ev.AssignID("tenant-1", "a_table", s)
			}
		})
	}
}

func BenchmarkMarshalJSON(b *testing.B) {
	evsBatch, err := DecodeNDJSON([]byte(benchEvent), Limits{}, benchNow)
	evs := evsBatch.Events()
	if err != nil {
		b.Fatal(err)
	}
	ev := evs[0]
	ev.AssignID("tenant-1", "a_table", LatestIDScheme)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = ev.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBaselineEncodingJSON decodes the same body as
// BenchmarkDecodeNDJSON with encoding/json alone, without any validation,
// canonical numbers or time parsing: the reference the hand parser is
// measured against.
func BenchmarkBaselineEncodingJSON(b *testing.B) {
	const n = 1000
	body := ndjsonBody(n)
	type wire struct {
		Time   json.RawMessage `json:"time"`
		Series string          `json:"series"`
		ID     string          `json:"id"`
		Fields map[string]any  `json:"fields"`
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		dec.DisallowUnknownFields()
		evs := make([]wire, 0, n)
		for dec.More() {
			var w wire
			if err := dec.Decode(&w); err != nil {
				b.Fatal(err)
			}
			evs = append(evs, w)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

// BenchmarkValidateDecoded is the cost of Validate on an event a decoder
// already checked: what a Batch saves the engine on every event it
// writes.
func BenchmarkValidateDecoded(b *testing.B) {
	evsBatch, err := DecodeNDJSON([]byte(benchEvent), Limits{}, benchNow)
	evs := evsBatch.Events()
	if err != nil {
		b.Fatal(err)
	}
	ev := evs[0]
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(&ev, Limits{}, benchNow); err != nil {
			b.Fatal(err)
		}
	}
}
