package influxql

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
)

// What a raw SELECT holds of each row it builds, the event read from
// the engine and the answer's row, is measured at two sizes and with two
// shapes of event (a tag and a field, a tag and seven fields, a tag and twenty), as line
// protocol writes them: it is not more than rawRowBytes and
// rawValueBytes a column, which the query budget counts.
func TestRawRowsHoldNoMoreThanCounted(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	store, schema := backends.Pebble().Open(t)
	db, err := engine.Open(ctx, store, engine.Options{Schema: schema, Clock: clock.NewManual(at)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	for _, fields := range []int{1, 7, 20} {
		table := fmt.Sprintf("m%d", fields)
		var events []event.Event
		for i := range 4000 {
			host := fmt.Sprintf("h%06d", i%100)
			ev := event.Event{Time: at.Add(-time.Duration(i) * time.Second), Series: "host=" + host,
				Fields: map[string]any{"host": host}}
			for f := range fields {
				ev.Fields[fmt.Sprintf("field%d", f)] = json.Number(strconv.Itoa(i*1000 + f))
			}
			events = append(events, ev)
		}
		_, err = db.Write(ctx, "acme", table, events)
		require.NoError(t, err)
		for _, n := range []int{1000, 4000} {
			x := newExecutor(db, "acme", Options{Database: "acme"})
			p := &plan{loc: time.UTC, tagKeys: []string{"host"}}
			refs := []string{"host"}
			for f := range fields {
				refs = append(refs, fmt.Sprintf("field%d", f))
			}
			before := heapAlloc()
			got, err := x.read(ctx, engine.Query{Table: table, From: at.Add(-2 * time.Hour), To: at.Add(time.Second)}, n, func(event.Event) bool { return true })
			require.NoError(t, err)
			rows := make([][]any, 0, len(got))
			tagsOf := map[string]map[string]string{}
			for _, ev := range got {
				rows = append(rows, x.row(ev, refs, p, tagsOf))
			}
			held := heapAlloc() - before
			require.Len(t, rows, n)
			runtime.KeepAlive(got)
			runtime.KeepAlive(rows)
			each := held / int64(n)
			counted := int64(rawRowBytes + len(refs)*rawValueBytes)
			t.Logf("%d rows of %d columns: %d bytes a row, counted %d", n, len(refs), each, counted)
			require.LessOrEqual(t, each, counted, "%d rows of %d columns", n, len(refs))
		}
	}
}

// heapAlloc returns the bytes the heap holds live, after a collection.
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC() // what pools held is freed at the second
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
