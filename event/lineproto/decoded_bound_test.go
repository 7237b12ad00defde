package lineproto_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// expandingLines returns a line protocol body of about size bytes whose
// numbers take 25 times their text in canonical form (1e125 is 126
// digits).
func expandingLines(size int) []byte {
	var fields []string
	for i := range 20 {
		fields = append(fields, string(rune('a'+i))+"=1e125")
	}
	line := "m " + strings.Join(fields, ",") + "\n"
	return []byte(strings.Repeat(line, size/len(line)+1))
}

func TestNumbersThatExpandPastTheBoundAreRefused(t *testing.T) {
	var ratios []float64
	for _, size := range []int{256 << 10, 1 << 20} {
		body := expandingLines(size)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := lineproto.Decode(body, lineproto.Options{Now: now})
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, event.ErrDecodedTooLarge)
		var tl *event.DecodedTooLargeError
		require.ErrorAs(t, err, &tl)
		require.Equal(t, len(body), tl.Size)
		ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(body))
		t.Logf("body %d bytes: %.1f times the body allocated", len(body), ratio)
		require.Less(t, ratio, 12.0)
		ratios = append(ratios, ratio)
	}
	// Read whole, the events would hold their numbers at 25 times the
	// body, and maps and batches besides; refused at twice the body,
	// the memory grows with the body, not more.
	require.LessOrEqual(t, ratios[1], ratios[0]+2)
}

func TestOrdinaryNumbersWithExponentsReadBackExactly(t *testing.T) {
	tables := decode(t, "m a=1e20,b=1.5e-7,c=-2.5E+3,d=1e125,e=12i\n", lineproto.Options{})
	require.Len(t, tables, 1)
	require.Equal(t, map[string]any{
		"a": json.Number("100000000000000000000"),
		"b": json.Number("0.00000015"),
		"c": json.Number("-2500"),
		"d": json.Number("1" + strings.Repeat("0", 125)),
		"e": json.Number("12"),
	}, tables[0].Events.Event(0).Fields)
}
