package parquetfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// TestEventsReadsTheSelectionsRows reads an hour of one series from a
// file of 20 series of an event a minute over a day, in row groups of
// 4,096 rows: sorted as the archive writes it, it reads the hour's 60
// rows whole, not the row group's 4,096 (it reads the key columns of
// the row group first); written in time order (series interleaved) it
// reads the selection's rows alone too, scattered over the row groups,
// and finds the same events.
func TestEventsReadsTheSelectionsRows(t *testing.T) {
	day := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
	const series, minutes = 20, 24 * 60
	ev := func(s, m int) event.Event {
		return event.Event{Time: day.Add(time.Duration(m) * time.Minute), Series: fmt.Sprintf("car-%02d", s), ID: fmt.Sprint(s, "-", m),
			Fields: map[string]any{"speed": json.Number(fmt.Sprint(60 + m%40)), "gear": "D"}}
	}
	write := func(order func(yield func(s, m int))) *File {
		l := NewLearner(Options{Origin: true})
		l.Learn(ev(0, 0).Fields)
		var buf bytes.Buffer
		w := NewWriterRowGroups(&buf, l.Schema(), 4096)
		order(func(s, m int) { require.NoError(t, w.Write("acme", "cars", ev(s, m))) })
		require.NoError(t, w.Close())
		f, err := OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err)
		require.EqualValues(t, series*minutes, f.NumRows())
		return f
	}
	sorted := write(func(yield func(s, m int)) {
		for s := range series {
			for m := range minutes {
				yield(s, m)
			}
		}
	})
	byTime := write(func(yield func(s, m int)) {
		for m := range minutes {
			for s := range series {
				yield(s, m)
			}
		}
	})
	var want []event.Event
	for m := 600; m < 660; m++ {
		want = append(want, ev(7, m))
	}
	sel := Selection{Tenant: "acme", Table: "cars", Series: "car-07", From: day.Add(10 * time.Hour), To: day.Add(11*time.Hour - time.Nanosecond)}
	for name, f := range map[string]*File{"sorted": sorted, "in time order": byTime} {
		var got []event.Event
		read, err := f.events(sel, func(e event.Event) error { got = append(got, e); return nil })
		require.NoError(t, err)
		require.Equal(t, want, got, name)
		require.Equal(t, 60, read, "%s: rows read whole", name)
	}
	// Another tenant's table: no row is read whole.
	read, err := sorted.events(Selection{Tenant: "globex", Table: "cars", Series: "car-07", From: sel.From, To: sel.To}, func(event.Event) error { return nil })
	require.NoError(t, err)
	require.Zero(t, read)
}
