package parquetfile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/parquetfile"
)

// TestFileReadsBack writes events of every column kind and reads them
// back: every value that is not a double, a null in a typed column or
// binary in fields_json reads back as it was written.
func TestFileReadsBack(t *testing.T) {
	var evs []event.Event
	for i := range 10 {
		f := map[string]any{
			"count":   json.Number(fmt.Sprint(i * 1000)),
			"speed":   json.Number(fmt.Sprintf("%d.%d", 80+i, i)),
			"precise": json.Number(fmt.Sprintf("-1234567890123456789012345.%07d", i+1)),
			"name":    fmt.Sprintf("car-%d", i),
			"on":      i%2 == 0,
			"raw":     []byte{byte(i), 0xff},
			"mixed":   json.Number("1"),
			"tags":    []any{"a", json.Number("1.25")},
			"small":   json.Number("0.005"),
		}
		if i == 3 {
			f["mixed"] = "one"
		}
		evs = append(evs, event.Event{Time: t0.Add(time.Duration(i) * time.Minute), Series: "s", ID: fmt.Sprint("id-", i), Fields: f})
	}
	l := parquetfile.NewLearner(parquetfile.Options{Origin: true})
	for _, e := range evs {
		l.Learn(e.Fields)
	}
	var buf bytes.Buffer
	w := parquetfile.NewWriterRowGroups(&buf, l.Schema(), 3)
	for _, e := range evs {
		require.NoError(t, w.Write("acme", "cars", e))
	}
	require.NoError(t, w.Write("acme", "cars", event.Event{Time: t0, Series: "t", ID: "other"}))
	require.NoError(t, w.Close())

	f, err := parquetfile.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.EqualValues(t, 11, f.NumRows())
	var got []event.Event
	sel := parquetfile.Selection{Tenant: "acme", Table: "cars", Series: "s", From: t0.Add(2 * time.Minute), To: t0.Add(5 * time.Minute)}
	require.NoError(t, f.Events(sel, func(e event.Event) error { got = append(got, e); return nil }))
	require.Equal(t, evs[2:6], got)
	got = nil
	require.NoError(t, f.Events(parquetfile.Selection{Tenant: "acme", Table: "cars", Series: "t", From: t0, To: t0}, func(e event.Event) error { got = append(got, e); return nil }))
	require.Equal(t, []event.Event{{Time: t0, Series: "t", ID: "other"}}, got)
}

// TestFileSeries lists the series of each tenant's table from a file of
// several tenants and tables, sorted as an archive writes them, in row
// groups of many rows and of several pages (series of up to a kilobyte): each table's series, once each, and none
// of another's.
func TestFileSeries(t *testing.T) {
	type key struct{ tenant, table string }
	want := map[key][]string{}
	l := parquetfile.NewLearner(parquetfile.Options{Origin: true})
	l.Learn(map[string]any{"v": json.Number("1")})
	var buf bytes.Buffer
	w := parquetfile.NewWriterRowGroups(&buf, l.Schema(), 2000)
	for _, k := range []key{{"acme", "cars"}, {"acme", "trucks"}, {"globex", "cars"}} {
		for s := range 300 {
			series := fmt.Sprintf("%s-%s-%04d-%s", k.tenant, k.table, s, strings.Repeat("x", s%50*20))
			want[k] = append(want[k], series)
			for i := range 4 {
				require.NoError(t, w.Write(k.tenant, k.table, event.Event{Time: t0.Add(time.Duration(i) * time.Minute), Series: series,
					ID: fmt.Sprint(s, "-", i), Fields: map[string]any{"v": json.Number(fmt.Sprint(i))}}))
			}
		}
	}
	require.NoError(t, w.Close())
	f, err := parquetfile.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.EqualValues(t, 3*300*4, f.NumRows())
	for k, series := range want {
		got, err := f.Series(k.tenant, k.table)
		require.NoError(t, err)
		require.Equal(t, series, got, "%v", k)
	}
	got, err := f.Series("globex", "trucks")
	require.NoError(t, err)
	require.Empty(t, got)
}
