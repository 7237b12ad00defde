package chunk

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/engine/itemenc"
)

// TestFirstTimesReadsAsFirstTime: FirstTimes, which parses a window's
// time prefix once, reads every key as FirstTime does, short or long, in
// one window after another and back, and refuses the keys it refuses.
func TestFirstTimesReadsAsFirstTime(t *testing.T) {
	sum := bytes.Repeat([]byte{0xab}, 32)
	var keys []string
	for _, window := range []time.Duration{time.Second, time.Hour, 24 * time.Hour} {
		for _, tm := range []time.Time{at(0), at(123456789), at(3599999999999), time.Date(2026, 11, 5, 13, 0, 0, 0, time.UTC),
			time.Date(2026, 11, 5, 13, 59, 59, 999999999, time.UTC), time.Date(2026, 11, 5, 14, 0, 0, 1, time.UTC), time.Date(1969, 12, 31, 23, 0, 0, 5, time.UTC)} {
			start := WindowStart(tm, window)
			short := string(appendSortKey(nil, start, tm, sum))
			keys = append(keys, short, longSortKey(tm, sum), short[:len(short)-1], short+"x")
			// A prefix FirstTimes has cached, with an offset no key has.
			sep := bytes.IndexByte([]byte(short), SortKeySep)
			keys = append(keys, short[:sep+1]+"Aa"+short[len(short)-sumChars:], short[:sep+1]+"?"+short[len(short)-sumChars:])
		}
	}
	keys = append(keys, "", "x", string(SortKeySep), itemenc.SortKey(at(5), "!"), itemenc.SortKey(at(5), "#id"), "2026-13\"Bb"+string(bytes.Repeat([]byte{'A'}, sumChars)))
	var c FirstTimes
	for round := range 2 {
		for _, sk := range keys {
			want, wantOK := FirstTime(sk)
			got, ok := c.Nanos(sk)
			require.Equal(t, wantOK, ok, "round %d: %q", round, sk)
			if ok {
				require.Equal(t, want.UnixNano(), got, "round %d: %q", round, sk)
			}
		}
	}
}
