package lineproto_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

var now = time.Date(2026, 11, 23, 8, 30, 15, 123456789, time.UTC)

func decode(t *testing.T, body string, o lineproto.Options) []lineproto.Table {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = now
	}
	tables, err := lineproto.Decode([]byte(body), o)
	require.NoError(t, err)
	return tables
}

func refused(t *testing.T, body string, o lineproto.Options) []lineproto.Problem {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = now
	}
	tables, err := lineproto.Decode([]byte(body), o)
	require.ErrorIs(t, err, event.ErrInvalidEvent)
	require.Nil(t, tables)
	var le *lineproto.Error
	require.ErrorAs(t, err, &le)
	return le.Problems
}

func TestDecodeMapsALine(t *testing.T) {
	tables := decode(t, `weather,site=north,probe=7 temp=21.5,rain=0i,count=3u,ok=true,off=F,note="dry \"day\"" 1795262400000000001`, lineproto.Options{})
	require.Len(t, tables, 1)
	require.Equal(t, "weather", tables[0].Name)
	require.Equal(t, []int{1}, tables[0].Lines)
	require.Equal(t, 1, tables[0].Events.Len())
	ev := tables[0].Events.Event(0)
	require.Equal(t, time.Unix(0, 1795262400000000001).UTC(), ev.Time)
	require.Equal(t, "probe=7,site=north", ev.Series)
	require.Equal(t, map[string]any{
		"site": "north", "probe": "7",
		"temp": json.Number("21.5"), "rain": json.Number("0"), "count": json.Number("3"),
		"ok": true, "off": false, "note": `dry "day"`,
	}, ev.Fields)
	require.Empty(t, ev.ID, "ids are the engine's to assign")
}

func TestDecodeGroupsByMeasurementInOrderOfAppearance(t *testing.T) {
	body := "# a comment\n\ncpu,host=a usage=1 1795262400\r\nmem free=2i 1795262400\n  \ncpu,host=b usage=3 1795262401\n"
	tables := decode(t, body, lineproto.Options{Limits: event.Limits{Precision: event.PrecisionSeconds}})
	require.Len(t, tables, 2)
	require.Equal(t, "cpu", tables[0].Name)
	require.Equal(t, []int{3, 6}, tables[0].Lines)
	require.Equal(t, "host=b", tables[0].Events.Event(1).Series)
	require.Equal(t, time.Unix(1795262401, 0).UTC(), tables[0].Events.Event(1).Time)
	require.Equal(t, "mem", tables[1].Name)
	require.Equal(t, []int{4}, tables[1].Lines)
	require.Equal(t, "", tables[1].Events.Event(0).Series, "no tag, no series")
}

func TestDecodePrecisions(t *testing.T) {
	for _, c := range []struct {
		precision event.Precision
		stamp     string
		want      time.Time
	}{
		{event.PrecisionAuto, "1795262400123456789", time.Unix(1795262400, 123456789)},
		{event.PrecisionNanos, "1795262400123456789", time.Unix(1795262400, 123456789)},
		{event.PrecisionMicros, "1795262400123456", time.Unix(1795262400, 123456000)},
		{event.PrecisionMillis, "1795262400123", time.Unix(1795262400, 123000000)},
		{event.PrecisionSeconds, "1795262400", time.Unix(1795262400, 0)},
	} {
		tables := decode(t, "m v=1 "+c.stamp, lineproto.Options{Limits: event.Limits{Precision: c.precision}})
		require.Equal(t, c.want.UTC(), tables[0].Events.Event(0).Time, "precision %q", c.precision)
	}
}

func TestDecodeWithoutTimestampTakesTheReceiveTime(t *testing.T) {
	tables := decode(t, "m v=1", lineproto.Options{})
	require.Equal(t, now, tables[0].Events.Event(0).Time)
	tables = decode(t, "m v=1", lineproto.Options{Limits: event.Limits{Precision: event.PrecisionSeconds}})
	require.Equal(t, now.Truncate(time.Second), tables[0].Events.Event(0).Time, "truncated to the precision")
}

func TestDecodeEscapesTheSeries(t *testing.T) {
	tables := decode(t, `m,b=x\,y,a\ k=1\=2 v=1 1795262400000000000`, lineproto.Options{})
	ev := tables[0].Events.Event(0)
	require.Equal(t, `a\ k=1\=2,b=x\,y`, ev.Series)
	require.Equal(t, "x,y", ev.Fields["b"])
	require.Equal(t, "1=2", ev.Fields["a k"])
}

func TestDecodeOptionsReplaceTableAndSeries(t *testing.T) {
	tables := decode(t, "cpu,host=a v=1 1795262400000000000\nmem v=2 1795262400000000000", lineproto.Options{Table: "telemetry", Series: "dev-1"})
	require.Len(t, tables, 1)
	require.Equal(t, "telemetry", tables[0].Name)
	require.Equal(t, 2, tables[0].Events.Len())
	require.Equal(t, "dev-1", tables[0].Events.Event(0).Series)
	require.Equal(t, "a", tables[0].Events.Event(0).Fields["host"], "tags are still fields")
}

func TestDecodeRefusesEveryBadLineAndNothingElse(t *testing.T) {
	body := strings.Join([]string{
		"ok v=1 1795262400000000000", // 1
		"cpu,host=a",                 // 2: no field
		"cpu value=",                 // 3: no value
		"cpu,host=a host=1",          // 4: tag and field
		"cpu v=1,v=2",                // 5: field twice
		"cpu,t=1,t=2 v=1",            // 6: tag twice
		"cpu v=1 12x",                // 7: bad timestamp
		"cpu v=1 -1",                 // 8: before 1970
		"cpu pk=1",                   // 9: reserved name
		"cpu v=1e200",                // 10: beyond DynamoDB's numbers
		"cpu,s=" + strings.Repeat("x", 600) + " v=1", // 11: series too long
		`cpu s="open`,                  // 12: unterminated string
		"cpu v=1 99999999999999999999", // 13: timestamp out of range
	}, "\n")
	problems := refused(t, body, lineproto.Options{})
	var lines []int
	for _, p := range problems {
		lines = append(lines, p.Line)
		require.NotEmpty(t, p.Reason, "line %d", p.Line)
	}
	require.Equal(t, []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, lines)
	byLine := map[int]lineproto.Problem{}
	for _, p := range problems {
		byLine[p.Line] = p
	}
	require.Contains(t, byLine[4].Reason, `"host" is both a tag and a field`)
	require.Contains(t, byLine[5].Reason, `field "v" appears twice`)
	require.Contains(t, byLine[6].Reason, `tag "t" appears twice`)
	require.Contains(t, byLine[8].Reason, "1970")
	require.Contains(t, byLine[11].Reason, "tag set, the series")
	require.Equal(t, "cpu value=", byLine[3].Text)
	require.True(t, strings.HasSuffix(byLine[11].Text, "…"))
}

func TestErrorNamesTheLines(t *testing.T) {
	_, err := lineproto.Decode([]byte("ok v=1\nbad"), lineproto.Options{Now: now})
	require.EqualError(t, err, `timetable: invalid event: 1 bad line: line 2: unable to parse 'bad': no field: a line is measurement[,tag=value...] field=value[,...] [timestamp]`)
}

func TestDecodeEmptyBody(t *testing.T) {
	require.Empty(t, decode(t, "", lineproto.Options{}))
	require.Empty(t, decode(t, "\n# only a comment\n", lineproto.Options{}))
}

func TestProblemsOfATable(t *testing.T) {
	tables := decode(t, "a v=1\nb v=1\na v=2", lineproto.Options{})
	p := tables[0].Problems(&event.BatchError{Problems: []event.Problem{{Index: 1, Reason: "too old"}}})
	require.Equal(t, []lineproto.Problem{{Line: 3, Reason: "too old"}}, p)
}

// Numbers are stored in canonical form, whatever line protocol spelling
// they came in, and refused where line protocol or DynamoDB refuses them.
func TestDecodeNumbers(t *testing.T) {
	tables := decode(t, "m a=1.,b=.5,c=-0i,d=1E3,e=007i,f=1.50,g=18446744073709551615u,h=-9223372036854775808i 1795262400000000000", lineproto.Options{})
	require.Equal(t, map[string]any{
		"a": json.Number("1"), "b": json.Number("0.5"), "c": json.Number("0"), "d": json.Number("1000"),
		"e": json.Number("7"), "f": json.Number("1.5"), "g": json.Number("18446744073709551615"), "h": json.Number("-9223372036854775808"),
	}, tables[0].Events.Event(0).Fields)
	for _, line := range []string{"m v=1.5i", "m v=99999999999999999999i", "m v=-1u", "m v=1e400", "m v=1e200", "m v=1e-200"} {
		problems := refused(t, line, lineproto.Options{})
		require.Len(t, problems, 1, line)
	}
}

// A body of more lines than are held as events at once (they are packed
// into their table's batch a thousand or so at a time) reads back every
// event in order, tables interleaved, and names a bad event's line
// wherever it falls.
func TestDecodeALongBodyPacksAsItGoes(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "m%d,host=h%d v=%di %d\n", i%2, i%7, i, 1795262400000000000+int64(i))
	}
	tables := decode(t, b.String(), lineproto.Options{})
	require.Len(t, tables, 2)
	for k, table := range tables {
		require.Equal(t, fmt.Sprintf("m%d", k), table.Name)
		require.Equal(t, 2500, table.Events.Len())
		require.Len(t, table.Lines, 2500)
		for j := range table.Events.Len() {
			i := 2*j + k
			require.Equal(t, i+1, table.Lines[j])
			ev := table.Events.Event(j)
			require.Equal(t, fmt.Sprintf("host=h%d", i%7), ev.Series)
			require.Equal(t, json.Number(fmt.Sprint(i)), ev.Fields["v"])
		}
	}

	// Line 3,001 (m0's 1,501st event, in its second pack) and line
	// 4,802 (m1's 2,401st, in its third) are before 1970.
	body := strings.Split(b.String(), "\n")
	body[3000] = "m0 v=1i -1"
	body[4801] = "m1 v=1i -5"
	problems := refused(t, strings.Join(body, "\n"), lineproto.Options{})
	require.Len(t, problems, 2)
	require.Equal(t, 3001, problems[0].Line)
	require.Equal(t, "m0 v=1i -1", problems[0].Text)
	require.Equal(t, 4802, problems[1].Line)
	require.Equal(t, "m1 v=1i -5", problems[1].Text)
}
