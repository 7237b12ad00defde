package influxql

import (
	"slices"
	"sort"
	"strings"
)

// # mode(f)
//
// mode(f) is the most frequent value of a bucket, computed from its
// points (points.go) as InfluxDB 1.x's ModeReduceSlice computes it,
// ties and all: the points, in the order InfluxDB's iterator gives them
// (by time, and of one time by series; newest first under ORDER BY time
// DESC), are sorted by value with Go's
// sort.Sort (InfluxDB's sort, unstable past 12 points: the same
// algorithm gives the same order), then walked in that order counting
// runs of one value. The first run is the mode so far; a later run
// becomes the mode once its count reaches the mode's and the time of its
// first point (in the sorted order) is not after the time of the point
// that last raised the mode's count, or once its count passes the mode's.
// A run's first point is skipped (InfluxDB counts it without comparing),
// so a value that appears once is the mode only when it is the least
// value and no other appears twice. A bucket of one point is its value.
// Points of one time in several series come in the order of their
// series' names, where InfluxDB's merge of the series gives them in an
// order of its own (docs/influxql.md, Differences).

// modeOf is the mode of a bucket's points.
func modeOf(pts []point, desc bool) any {
	if len(pts) == 1 {
		return pts[0].v
	}
	a := slices.Clone(pts)
	slices.SortStableFunc(a, func(x, y point) int {
		c := x.t.Compare(y.t)
		if c == 0 {
			c = strings.Compare(x.series, y.series)
		}
		if desc {
			return -c
		}
		return c
	})
	sort.Sort(byValue(a))
	mostFreq, currFreq := 0, 0
	currMode, mostMode := a[0].v, a[0].v
	mostTime, currTime := a[0].t, a[0].t
	for _, p := range a {
		if !sameValue(p.v, currMode) {
			currFreq, currMode, currTime = 1, p.v, p.t
			continue
		}
		currFreq++
		if mostFreq > currFreq || (mostFreq == currFreq && currTime.After(mostTime)) {
			continue
		}
		mostFreq, mostMode, mostTime = currFreq, p.v, p.t
	}
	return mostMode
}

// byValue sorts points by value as InfluxDB's PointsByValue do: numbers
// by value, strings in byte order, false before true.
type byValue []point

func (a byValue) Len() int           { return len(a) }
func (a byValue) Less(i, j int) bool { return lessValue(a[i].v, a[j].v) }
func (a byValue) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }

func lessValue(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa < fb
	}
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a < b
	case bool:
		b, ok := b.(bool)
		return ok && !a && b
	}
	return false
}

// sameValue reports whether two values of a field are equal, numbers by
// value.
func sameValue(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	return a == b
}
