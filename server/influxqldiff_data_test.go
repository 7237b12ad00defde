package server_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// diffStart is the start of the hour of TestInfluxQLDifferential's data,
// two hours before the fixtures' now.
var diffStart = now.Add(-2 * time.Hour)

// diffMeasurement is a measurement of the differential test's data: its
// tag keys, each of which some of its series lack, and its fields, each
// of one type (InfluxDB refuses a field of two types in a shard).
type diffMeasurement struct {
	name   string
	tags   []diffTag
	fields []diffField
}

type diffTag struct {
	key    string
	values []string
}

// diffField is a field and its type: float, integer, string or boolean.
type diffField struct {
	name, typ string
}

// diffSchema is the measurements of the data. The field f is in two of
// them, so that several measurements in FROM share a column and differ in
// others; tag host in all three.
var diffSchema = []diffMeasurement{
	{name: "cpu", tags: []diffTag{{"host", []string{"a", "b"}}, {"region", []string{"eu", "us"}}},
		fields: []diffField{{"f", "float"}, {"i", "integer"}, {"s", "string"}, {"b", "boolean"}}},
	{name: "mem", tags: []diffTag{{"host", []string{"a", "c"}}, {"dc", []string{"x"}}},
		fields: []diffField{{"f", "float"}, {"n", "integer"}}},
	{name: "net", tags: []diffTag{{"host", []string{"b"}}},
		fields: []diffField{{"rx", "float"}, {"up", "boolean"}}},
}

// diffPoint is one line of the data.
type diffPoint struct {
	measurement string
	tags        map[string]string // absent keys are absent
	at          time.Time
	fields      map[string]string // line protocol values
}

// line is the point as line protocol.
func (p diffPoint) line() string {
	var b strings.Builder
	b.WriteString(p.measurement)
	keys := sortedKeys(p.tags)
	for _, k := range keys {
		fmt.Fprintf(&b, ",%s=%s", k, p.tags[k])
	}
	b.WriteByte(' ')
	for i, k := range sortedKeys(p.fields) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", k, p.fields[k])
	}
	fmt.Fprintf(&b, " %d\n", p.at.UnixNano())
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// diffData generates the points: for each measurement, series of every
// combination of its tags, a tag absent among the choices (so that there
// are series with and without each tag, the series of no tag at all
// among them), about two in three of them kept; each series a point
// every 10 s, 30 s or 1 m from a grid of the hour (every grid time a
// bucket edge of 10s, and of 1m, 5m and 1h where it falls on one, and
// the same instant in several series), with gaps of a few minutes and
// some points off the grid by milliseconds; each point a random non-empty
// set of its measurement's fields, so that rows lack some fields.
func diffData(rng *rand.Rand) []diffPoint {
	var out []diffPoint
	for _, m := range diffSchema {
		for _, tags := range tagCombinations(m.tags) {
			if len(tags) > 0 && rng.IntN(3) == 0 {
				continue
			}
			step := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute}[rng.IntN(3)]
			gapFrom := diffStart.Add(time.Duration(rng.IntN(50)) * time.Minute)
			gapTo := gapFrom.Add(time.Duration(2+rng.IntN(10)) * time.Minute)
			for at := diffStart; at.Before(diffStart.Add(time.Hour)); at = at.Add(step) {
				if !at.Before(gapFrom) && at.Before(gapTo) || rng.IntN(5) == 0 {
					continue
				}
				t := at
				if rng.IntN(10) == 0 {
					t = t.Add(time.Duration(1+rng.IntN(999)) * time.Millisecond)
				}
				out = append(out, diffPoint{measurement: m.name, tags: tags, at: t, fields: diffFields(rng, m)})
			}
			// The last instant of the hour, an edge of every bucket.
			if rng.IntN(2) == 0 {
				out = append(out, diffPoint{measurement: m.name, tags: tags, at: diffStart.Add(time.Hour), fields: diffFields(rng, m)})
			}
		}
	}
	return out
}

// tagCombinations is every tag set of the keys, each key absent or one of
// its values.
func tagCombinations(tags []diffTag) []map[string]string {
	out := []map[string]string{{}}
	for _, t := range tags {
		var next []map[string]string
		for _, c := range out {
			next = append(next, c)
			for _, v := range t.values {
				d := map[string]string{t.key: v}
				for k, w := range c {
					d[k] = w
				}
				next = append(next, d)
			}
		}
		out = next
	}
	return out
}

// diffFields is a random non-empty set of the measurement's fields with
// values: floats of two decimals, negative ones among them (for
// non_negative_*), integers, three strings, booleans.
func diffFields(rng *rand.Rand, m diffMeasurement) map[string]string {
	out := map[string]string{}
	for len(out) == 0 {
		for _, f := range m.fields {
			if rng.IntN(4) == 0 {
				continue
			}
			switch f.typ {
			case "float":
				out[f.name] = fmt.Sprintf("%.2f", float64(rng.IntN(15000)-5000)/100)
			case "integer":
				out[f.name] = fmt.Sprintf("%di", rng.IntN(120)-20)
			case "string":
				out[f.name] = fmt.Sprintf("%q", []string{"x", "y", "z"}[rng.IntN(3)])
			case "boolean":
				out[f.name] = []string{"true", "false"}[rng.IntN(2)]
			}
		}
	}
	return out
}

// diffLines is the points as line protocol.
func diffLines(points []diffPoint) string {
	var b strings.Builder
	for _, p := range points {
		b.WriteString(p.line())
	}
	return b.String()
}

func diffMeasurementNamed(name string) diffMeasurement {
	for _, m := range diffSchema {
		if m.name == name {
			return m
		}
	}
	panic("no measurement " + name)
}
