package agg

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/timetabledb/timetable/event"
)

// percentiles returns p50, p90 and p99 of values, added one event each,
// some merged from a second summary.
func percentiles(t *testing.T, values []string) map[string]any {
	t.Helper()
	funcs := []string{FnP50, FnP90, FnP99}
	a, b := &Summary{Want: NeedsOf(funcs)}, &Summary{Want: NeedsOf(funcs)}
	at := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
	for i, v := range values {
		s := a
		if i%3 == 0 {
			s = b
		}
		s.Add(event.Event{Series: "s", ID: fmt.Sprint(i), Time: at.Add(time.Duration(i)), Fields: map[string]any{"v": json.Number(v)}}, []string{"v"})
	}
	a.Merge(b, []string{"v"})
	bk, err := a.Bucket(Bucket{Start: at, End: at.Add(time.Hour), Values: map[string]map[string]any{}}, at, []string{"v"}, funcs, true, RankNearest)
	if err != nil {
		t.Fatal(err)
	}
	return bk.Values["v"]
}

// Percentiles of a bucket of at most QuantileExact values are the
// nearest-rank values, to every digit they were written with.
func TestPercentilesExactWhileFew(t *testing.T) {
	for _, c := range []struct {
		values        []string
		p50, p90, p99 json.Number
	}{
		{[]string{"89.7"}, "89.7", "89.7", "89.7"},
		{[]string{"1449"}, "1449", "1449", "1449"},
		{[]string{"4", "1", "3", "2"}, "2", "4", "4"},
		{[]string{"0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"}, "0.5", "0.9", "1"},
	} {
		got := percentiles(t, c.values)
		if got[FnP50] != c.p50 || got[FnP90] != c.p90 || got[FnP99] != c.p99 {
			t.Errorf("%v: p50, p90, p99 = %v, %v, %v; want %v, %v, %v", c.values, got[FnP50], got[FnP90], got[FnP99], c.p50, c.p90, c.p99)
		}
	}
	var many []string
	for i := 1; i <= QuantileExact; i++ {
		many = append(many, strconv.Itoa(i))
	}
	if got := percentiles(t, many); got[FnP50] != json.Number("500") || got[FnP99] != json.Number("990") {
		t.Errorf("1..%d: p50 %v, p99 %v; want 500, 990", QuantileExact, got[FnP50], got[FnP99])
	}
}

// Past QuantileExact values, percentiles are estimates within
// QuantileAccuracy of the nearest-rank value.
func TestPercentilesEstimatedPastExact(t *testing.T) {
	var many []string
	n := 3 * QuantileExact
	for i := 1; i <= n; i++ {
		many = append(many, strconv.Itoa(i))
	}
	got := percentiles(t, many)
	for fn, want := range map[string]float64{FnP50: float64(n) / 2, FnP90: float64(n) * 0.9, FnP99: float64(n) * 0.99} {
		f, err := strconv.ParseFloat(string(got[fn].(json.Number)), 64)
		if err != nil || math.Abs(f-want) > want*QuantileAccuracy {
			t.Errorf("%s = %v, want %v within %v%%", fn, got[fn], want, QuantileAccuracy*100)
		}
	}
}
