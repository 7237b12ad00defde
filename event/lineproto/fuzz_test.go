package lineproto_test

import (
	"errors"
	"testing"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// FuzzDecode holds Decode to its contract and to InfluxData's decoder: a
// body is refused with an *Error naming lines in order, or accepted with
// valid events, one per line the library's own decoder reads from the
// whole body, of the same measurements in the same order.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"weather,site=north,probe=7 temp=21.5,rain=0i,count=3u,ok=true,note=\"dry\" 1795262400000000001",
		"cpu,host=a usage=1 1795262400\r\nmem free=2i\n# comment\n\ncpu,host=b usage=3",
		`m,b=x\,y,a\ k=1\=2 v=1`,
		"cpu,host=a host=1\ncpu v=1,v=2\ncpu v=1 -1\ncpu pk=1\ncpu s=\"open\n\"",
		"m v=1e200\nm v=-0.0\nm v=1.5E-3 0",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tables, err := lineproto.Decode(body, lineproto.Options{Now: now})
		if errors.Is(err, event.ErrDecodedTooLarge) {
			return // numbers of a long canonical form, past the bound
		}
		if err != nil {
			var le *lineproto.Error
			require.ErrorAs(t, err, &le)
			require.NotEmpty(t, le.Problems)
			for i, p := range le.Problems {
				require.Positive(t, p.Line)
				require.NotEmpty(t, p.Reason)
				if i > 0 {
					require.Less(t, le.Problems[i-1].Line, p.Line)
				}
			}
			return
		}
		byLine := map[int]string{}
		for _, tb := range tables {
			require.NotEmpty(t, tb.Name)
			require.Len(t, tb.Lines, tb.Events.Len())
			_, err := event.Check(tb.Events.Events(), event.Limits{}, now)
			require.NoError(t, err, "an accepted event is valid")
			for _, l := range tb.Lines {
				byLine[l] = tb.Name
			}
		}
		d := lineprotocol.NewDecoderWithBytes(body)
		n := 0
		for d.Next() {
			m, err := d.Measurement()
			require.NoError(t, err, "the library reads every line Decode accepted")
			n++
			found := false
			for _, name := range byLine {
				found = found || name == string(m)
			}
			require.True(t, found, "measurement %q", m)
		}
		require.Equal(t, len(byLine), n)
	})
}
