package api

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An aggregate answer of buckets is written as encoding/json writes its
// fields, empty or not, with or without a rollups note.
func TestAggregateAppendJSONIsEncodingJSON(t *testing.T) {
	start := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	two := []Bucket{
		{Start: start, End: start.Add(time.Hour), Events: 2, Values: map[string]map[string]any{"t": {"count": int64(2), "sum": json.Number("3.5")}}},
		{Start: start.Add(time.Hour), End: start.Add(time.Hour + time.Minute), Partial: true},
	}
	// Buckets whose names change from one to the next: the same count
	// of other names, more, fewer, none, and back.
	values := []map[string]map[string]any{
		{"t": {"count": int64(1), "sum": json.Number("1")}, "u": {"count": int64(2)}},
		{"t": {"count": int64(1), "max": json.Number("1")}, "v": {"count": int64(2)}},
		{"t": {"count": int64(1), "max": json.Number("1"), "sum": json.Number("2")}, "v": {"count": int64(3)}, "a": nil},
		{"v": {"min": json.Number("4")}},
		{},
		{"t": {"count": int64(1), "sum": json.Number("1")}, "u": {"count": int64(2)}},
		{"u": {"count": int64(1), "sum": json.Number("1")}, "t": {"sum": json.Number("5"), "count": int64(2)}},
	}
	changing := make([]Bucket, len(values))
	for i, v := range values {
		s := start.Add(time.Duration(i) * time.Hour)
		changing[i] = Bucket{Start: s, End: s.Add(time.Hour), Events: int64(i), Values: v}
	}
	for _, c := range []struct {
		buckets []Bucket
		rollups string
	}{
		{nil, ""}, {two, ""}, {two[:1], `not used: "fill" <asks> & more`}, {changing, ""},
	} {
		answer := Aggregate{Buckets: c.buckets, Rollups: c.rollups}
		if answer.Buckets == nil {
			answer.Buckets = []Bucket{}
		}
		want, err := json.Marshal(aggregateJSON(answer))
		require.NoError(t, err)
		got, err := answer.AppendJSON(nil)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

// BenchmarkAggregateResponse writes the answer of the peer comparison's
// one-series aggregate, count and sum by the hour over 7 days, as the
// server does and through json.Marshal, which calls each bucket's
// MarshalJSON and then checks and compacts what it wrote.
func BenchmarkAggregateResponse(b *testing.B) {
	start := time.Date(2017, 6, 15, 0, 0, 0, 0, time.UTC)
	buckets := make([]Bucket, 7*24)
	for i := range buckets {
		s := start.Add(time.Duration(i) * time.Hour)
		buckets[i] = Bucket{Start: s, End: s.Add(time.Hour), Events: 2, Values: map[string]map[string]any{
			"temperature": {"count": int64(2), "sum": json.Number(fmt.Sprintf("%d.25", 40+i%10))}}}
	}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (Aggregate{Buckets: buckets}).AppendJSON(make([]byte, 0, 64+len(buckets)*160)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(aggregateJSON{Buckets: buckets}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
