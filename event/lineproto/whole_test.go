package lineproto

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// FuzzWholeMatchesEachLine holds the fast way of reading a body to the
// exact one: whenever one decoder over the whole body is taken to have
// read it right, a decoder per line reads the same events from the same
// lines.
func FuzzWholeMatchesEachLine(f *testing.F) {
	for _, s := range []string{
		"cpu,host=a usage=1 1795262400\r\nmem free=2i\n# comment\n\ncpu,host=b usage=3",
		"m s=\"a\n#x\" 1\nm v=1",
		"m s=\"a\\nb\" 1\nm v=1",
		"m v=1\r\n  \n  # c\nm,t=1 v=2 3\n",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 23, 8, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		o := Options{Now: now}
		lines, problems := splitLines(body)
		if problems != nil {
			return
		}
		fast := reader{opts: o, unit: event.PrecisionNanos, receiveTime: now, names: map[string]string{}}
		whole := newSink(o)
		if !fast.whole(body, lines, whole) {
			return
		}
		exact := reader{opts: o, unit: event.PrecisionNanos, receiveTime: now, names: map[string]string{}}
		each := newSink(o)
		problems = exact.eachLine(lines, nil, each)
		require.Empty(t, problems, "the fast way took a body the exact way refuses")
		wholeTables, wholeErr := whole.tables(nil)
		eachTables, eachErr := each.tables(nil)
		require.Equal(t, eachErr, wholeErr)
		require.Equal(t, each.problems, whole.problems)
		require.Equal(t, eachTables, wholeTables)
	})
}
