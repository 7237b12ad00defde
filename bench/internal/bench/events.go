// Package bench measures timetable against its baselines and prints the
// figures side by side, every one from the same run: `make bench`.
//
// Events are 180 bytes as DynamoDB counts an item (keys, attribute names
// and values; storage.ItemSize), the size of the AWS developer guide's
// example. Each figure is the median of several runs; machines here are
// small and noisy, so compare ratios, not absolute numbers.
//
// The peer comparison (Peers) measures `timetable serve` on Pebble beside
// the databases its users would pick instead: InfluxDB 1.x, PostgreSQL
// and VictoriaMetrics, Debian's packages, installed with apt-get when
// missing. Each is a plain process the benchmark starts on loopback in a
// temp dir and stops on every way out, one system at a time, so none
// competes with another for the machine. All get the same readings (a
// few numbers per event, which every one of them holds) written the same
// way, and the same four queries in their own protocols; every answer is
// checked against the generator, and a wrong one fails the run. Costs are
// measured from outside, the same way for all: CPU time of the server's
// processes from /proc, their peak memory, and the bytes their data dir
// grew by once flushed.
package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// EventBytes is the stored size of every benchmark event.
const EventBytes = 180

const (
	benchTenant = "bench"
	benchTable  = "sensors"
	seriesCount = 100
)

// generator makes 180-byte events, one per series in turn, ticking time.
type generator struct {
	start time.Time
	step  time.Duration
	pad   string
	// series is how many series the events cycle through.
	series int
}

func newGenerator(start time.Time, step time.Duration) *generator {
	g := &generator{start: start, step: step, series: seriesCount}
	// Size one event with an empty note, then pad the note to 180 bytes.
	g.pad = strings.Repeat("x", EventBytes-itemSize(g.event(0)))
	return g
}

// itemSize is the size DynamoDB counts for an event's item in the row
// layout, in the benchmark's table, with the longest id a scheme assigns
// (scheme 1's 22 characters): the events are padded to EventBytes by it,
// so that the workload every peer is given stays the bytes it was before
// tables had id schemes. In a table made now (scheme 2) the item is 11
// bytes smaller.
func itemSize(e event.Event) int {
	e.AssignID(benchTenant, benchTable, event.IDScheme1)
	item := storage.Item{PK: fmt.Sprintf("%s#%s#%s#0", benchTenant, benchTable, e.Series), SK: e.Time.Format("2006-01-02T15:04:05.000000000Z") + "#" + e.ID, Attrs: e.Fields}
	return storage.ItemSize(item)
}

func (g *generator) event(i int) event.Event {
	return event.Event{
		Time:   g.start.Add(time.Duration(i) * g.step),
		Series: fmt.Sprintf("dev-%04d", i%g.series),
		Fields: map[string]any{
			"temp":   json.Number(fmt.Sprintf("%d.%02d", 15+i%20, i%100)),
			"hum":    json.Number(fmt.Sprint(30 + i%60)),
			"pres":   json.Number(fmt.Sprintf("10%02d.%02d", i%30, i%100)),
			"status": "ok",
			"note":   g.pad,
		},
	}
}

// batch returns events [from, from+n).
func (g *generator) batch(from, n int) []event.Event {
	out := make([]event.Event, n)
	for i := range out {
		out[i] = g.event(from + i)
	}
	return out
}

// ndjson encodes events as the HTTP API takes them.
func ndjson(evs []event.Event) []byte {
	var b strings.Builder
	for _, e := range evs {
		line, err := json.Marshal(map[string]any{"time": e.Time.Format(time.RFC3339Nano), "series": e.Series, "fields": e.Fields})
		if err != nil {
			panic(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// lineProtocol encodes events as InfluxDB line protocol, the benchmark
// table as the measurement and the series as the tag dev (which the
// server keeps as a field too), times in nanoseconds.
func lineProtocol(evs []event.Event) []byte {
	var enc lineprotocol.Encoder
	enc.SetPrecision(lineprotocol.Nanosecond)
	for _, e := range evs {
		enc.StartLine(benchTable)
		enc.AddTag("dev", e.Series)
		for _, name := range slices.Sorted(maps.Keys(e.Fields)) {
			var v lineprotocol.Value
			switch f := e.Fields[name].(type) {
			case json.Number:
				x, err := f.Float64()
				if err != nil {
					panic(err)
				}
				v, _ = lineprotocol.FloatValue(x)
			case string:
				v, _ = lineprotocol.StringValue(f)
			default:
				panic(fmt.Sprintf("bench: field %s of type %T", name, f))
			}
			enc.AddField(name, v)
		}
		enc.EndLine(e.Time)
	}
	if err := enc.Err(); err != nil {
		panic(err)
	}
	return enc.Bytes()
}
