package mqttsub

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// TestUnwritten: a write that failed in part is tried again for the
// groups holding an unwritten event, by the index of the events of the
// groups taken in order (engine.WriteError).
func TestUnwritten(t *testing.T) {
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var gs []*group
	for i, n := range []int{2, 3, 1, 4} { // events 0-1, 2-4, 5, 6-9
		evs := make([]event.Event, n)
		for j := range evs {
			evs[j] = event.Event{Time: at.Add(time.Duration(j) * time.Second), Series: "s"}
		}
		b, err := event.Check(evs, event.Limits{}, at)
		require.NoError(t, err)
		gs = append(gs, &group{table: fmt.Sprint("t", i), events: b})
	}
	tables := func(gs []*group) []string {
		var names []string
		for _, g := range gs {
			names = append(names, g.table)
		}
		return names
	}
	require.Equal(t, []string{"t1", "t3"}, tables(unwritten(gs, []int{4, 9})))
	require.Equal(t, []string{"t0", "t2"}, tables(unwritten(gs, []int{0, 1, 5})))
	require.Equal(t, []string{"t1"}, tables(unwritten(gs, []int{2})))
	require.Empty(t, unwritten(gs, nil))
	require.Empty(t, unwritten(gs, []int{10}))
}
