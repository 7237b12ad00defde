package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
)

// The peer comparison's workload: the same events for every system, and
// the answers every query must get.
const (
	workloadEvents = 300000
	workloadSeries = 1000
	workloadDays   = 7
	// workloadTable is timetable's logical table, InfluxDB's measurement,
	// PostgreSQL's table and VictoriaMetrics' metric prefix.
	workloadTable = "sensors"
)

// workloadFields are the numeric fields of every event, in column order.
var workloadFields = []string{"temperature", "humidity", "pressure", "voltage"}

// aggregateField is the field the aggregates count and sum.
const aggregateField = "temperature"

// A reading is one event of the peer comparison: numbers only, which every
// system holds, at millisecond times, which every system keeps exactly.
type reading struct {
	Time   time.Time
	Series string
	Values [4]float64 // workloadFields
}

// peerWorkload generates the readings: workloadEvents spread evenly over
// workloadDays, the series in turn, so that each series has one reading
// every workloadSeries steps (33.6 minutes).
type peerWorkload struct {
	// start is a UTC midnight; the readings are 1 ms after it and later,
	// so none falls on an hour's edge, where systems that bucket by
	// (t-1h, t] and by [t, t+1h) would disagree.
	start time.Time
	step  time.Duration
}

// newPeerWorkload makes the readings of the seven whole days before
// yesterday: VictoriaMetrics refuses samples far from now.
func newPeerWorkload(now time.Time) peerWorkload {
	day := now.UTC().Truncate(24 * time.Hour)
	return peerWorkload{
		start: day.Add(-(workloadDays + 1) * 24 * time.Hour),
		step:  workloadDays * 24 * time.Hour / workloadEvents,
	}
}

func (w peerWorkload) end() time.Time { return w.start.Add(workloadDays * 24 * time.Hour) }

func seriesName(s int) string { return fmt.Sprintf("sensor-%04d", s) }

func (w peerWorkload) reading(i int) reading {
	return reading{
		Time:   w.start.Add(time.Millisecond + time.Duration(i)*w.step),
		Series: seriesName(i % workloadSeries),
		Values: [4]float64{
			15 + float64(i%2000)/100,
			float64(30 + i%60),
			1000 + float64(i%3000)/100,
			3 + float64(i%1000)/1000,
		},
	}
}

// event is the reading as timetable's event.
func (r reading) event() event.Event {
	fields := make(map[string]any, len(workloadFields))
	for j, f := range workloadFields {
		fields[f] = json.Number(number(r.Values[j]))
	}
	return event.Event{Time: r.Time, Series: r.Series, Fields: fields}
}

// batches returns the readings in write batches of n.
func (w peerWorkload) batches(n int) [][]reading {
	var out [][]reading
	for from := 0; from < workloadEvents; from += n {
		b := make([]reading, min(n, workloadEvents-from))
		for j := range b {
			b[j] = w.reading(from + j)
		}
		out = append(out, b)
	}
	return out
}

// ofSeries returns the indexes of series s's readings in [from, to).
func (w peerWorkload) ofSeries(s int, from, to time.Time) []int {
	var out []int
	for i := s; i < workloadEvents; i += workloadSeries {
		if t := w.reading(i).Time; !t.Before(from) && t.Before(to) {
			out = append(out, i)
		}
	}
	return out
}

// A bucket is an hour's count and sum of aggregateField.
type bucket struct {
	Start time.Time
	Count int
	Sum   float64
}

// hourly returns the hours of [from, to) that hold readings, of series s
// or, when s is negative, of every series.
func (w peerWorkload) hourly(s int, from, to time.Time) []bucket {
	var out []bucket
	add := func(r reading) {
		h := r.Time.Truncate(time.Hour)
		if len(out) == 0 || !out[len(out)-1].Start.Equal(h) {
			out = append(out, bucket{Start: h})
		}
		out[len(out)-1].Count++
		out[len(out)-1].Sum += r.Values[0]
	}
	if s >= 0 {
		for _, i := range w.ofSeries(s, from, to) {
			add(w.reading(i))
		}
		return out
	}
	first := max(0, int(from.Sub(w.start)/w.step)-1)
	for i := first; i < workloadEvents; i++ {
		r := w.reading(i)
		if !r.Time.Before(to) {
			break
		}
		if !r.Time.Before(from) {
			add(r)
		}
	}
	return out
}

// times returns the times of readings i, in order.
func (w peerWorkload) times(is []int) []time.Time {
	out := make([]time.Time, len(is))
	for j, i := range is {
		out[j] = w.reading(i).Time
	}
	return out
}

// checkBuckets fails when got is not want: counts exact, sums within the
// rounding of float64 additions.
func checkBuckets(what string, got, want []bucket) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d buckets, want %d", what, len(got), len(want))
	}
	for j := range want {
		g, w := got[j], want[j]
		if !g.Start.Equal(w.Start) || g.Count != w.Count || math.Abs(g.Sum-w.Sum) > 1e-9*math.Max(1, math.Abs(w.Sum)) {
			return fmt.Errorf("%s: bucket %d is %s count %d sum %v, want %s count %d sum %v",
				what, j, g.Start.Format(time.RFC3339), g.Count, g.Sum, w.Start.Format(time.RFC3339), w.Count, w.Sum)
		}
	}
	return nil
}

// checkTimes fails when got is not want.
func checkTimes(what string, got, want []time.Time) error {
	if !slices.EqualFunc(got, want, time.Time.Equal) {
		return fmt.Errorf("%s: times %v, want %v", what, got, want)
	}
	return nil
}

// number formats a value as every system's text formats take it.
func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// asNumber decodes a JSON number or a numeric string (VictoriaMetrics').
func asNumber(v any) (float64, error) {
	switch v := v.(type) {
	case json.Number:
		return v.Float64()
	case float64:
		return v, nil
	case string:
		return strconv.ParseFloat(v, 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}
