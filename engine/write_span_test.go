package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/event"
)

// The spans of a chunk-layout part hold each series' events whole (so a
// request's events of a series go into one chunk), within the bounds of
// a span, every event once; a row-layout part's are in event order.
func TestSpansBySeries(t *testing.T) {
	var evs []event.Event
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		evs = append(evs, event.Event{Time: at.Add(time.Duration(i) * time.Millisecond), Series: fmt.Sprintf("s%d", i%1000), Fields: map[string]any{"v": json.Number("1")}})
	}
	for i := range 3000 { // one series of more than a span
		evs = append(evs, event.Event{Time: at.Add(time.Duration(i) * time.Microsecond), Series: "big", Fields: map[string]any{"v": json.Number("2")}})
	}
	b, err := event.Check(evs, event.Limits{}, at.Add(time.Hour))
	require.NoError(t, err)

	sp := newSpans(b, true)
	var seen []int
	cut := map[string]int{} // spans holding each series
	for span := sp.span(); span != nil; span = sp.span() {
		require.LessOrEqual(t, len(span), admission.WriteSpanEvents)
		in := map[string]bool{}
		for _, i := range span {
			in[b.Series(i)] = true
		}
		for s := range in {
			cut[s]++
		}
		seen = append(seen, span...)
	}
	slices.Sort(seen)
	require.Len(t, seen, b.Len())
	for i, v := range seen {
		require.Equal(t, i, v, "every event once")
	}
	for s, n := range cut {
		if s == "big" {
			require.Equal(t, 3, n, "a series of 3,000 events in three spans")
		} else {
			require.Equal(t, 1, n, "series %s in one span", s)
		}
	}

	rows := newSpans(b, false)
	first := rows.span()
	require.Equal(t, admission.WriteSpanEvents, len(first))
	require.Equal(t, 0, first[0])
	require.Equal(t, admission.WriteSpanEvents-1, first[len(first)-1])
}
