package parquetfile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/duckdbtest"
	"github.com/timetabledb/timetable/parquetfile"
)

var t0 = time.Date(2017, 4, 10, 12, 0, 0, 123456789, time.UTC)

// events returns events with a field of every kind, and fields that
// cannot have a column of their own.
func events() []event.Event {
	var evs []event.Event
	for i := range 10 {
		f := map[string]any{
			"count":   json.Number(fmt.Sprint(i * 1000)),
			"speed":   json.Number(fmt.Sprintf("%d.%d", 80+i, i)),                    // DECIMAL(38,9)
			"precise": json.Number(fmt.Sprintf("1234567890123456789012345.%07d", i)), // 32 digits: DECIMAL(38,9)
			"fine":    json.Number(fmt.Sprintf("1.%010d", i)),                        // 10 fractional digits: double
			"huge":    json.Number(fmt.Sprintf("%de100", i+1)),                       // past 38 digits: double
			"name":    fmt.Sprintf("car-%d", i),
			"on":      i%2 == 0,
			"raw":     []byte{byte(i), 0xff},
			"mixed":   json.Number("1"), // a string in one event: fields_json
			"tags":    []any{"a", json.Number("1")},
			"Time":    "taken", // collides with the time column
			"seats":   nil,     // only nulls: fields_json
		}
		if i == 3 {
			f["mixed"] = "one"
			f["count"] = nil // a null in a typed column
		}
		if i == 5 {
			f["neg"] = json.Number("-0.5")
		}
		evs = append(evs, event.Event{Time: t0.Add(time.Duration(i) * time.Nanosecond), Series: "s", ID: fmt.Sprint("id-", i), Fields: f})
	}
	return evs
}

func write(t *testing.T, o parquetfile.Options, learn, evs []event.Event) string {
	t.Helper()
	l := parquetfile.NewLearner(o)
	for _, e := range learn {
		l.Learn(e.Fields)
	}
	var buf bytes.Buffer
	w := parquetfile.NewWriter(&buf, l.Schema())
	for _, e := range evs {
		require.NoError(t, w.Write("acme", "cars", e))
	}
	require.NoError(t, w.Close())
	require.EqualValues(t, len(evs), w.Rows())
	n, err := parquetfile.CountRows(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.EqualValues(t, len(evs), n)
	p := filepath.Join(t.TempDir(), "events.parquet")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	return p
}

func TestSchema(t *testing.T) {
	evs := events()
	l := parquetfile.NewLearner(parquetfile.Options{})
	for _, e := range evs {
		l.Learn(e.Fields)
	}
	kinds := map[string]string{}
	for _, c := range l.Schema().Columns() {
		kinds[c.Name] = string(c.Kind)
		if c.Kind == parquetfile.Decimal {
			kinds[c.Name] = fmt.Sprintf("decimal(%d,%d)", c.Precision, c.Scale)
		}
	}
	require.Equal(t, map[string]string{
		"count": "int64", "speed": "decimal(38,9)", "precise": "decimal(38,9)", "huge": "double",
		"name": "string", "on": "bool", "raw": "binary", "mixed": "json", "tags": "json",
		"Time": "json", "seats": "json", "neg": "decimal(38,9)", "fine": "double",
	}, kinds)
}

// TestDuckDBReads reads a file back with DuckDB: its columns' types,
// every value, the sums of exact decimals to the digit, and the event
// times to the nanosecond.
func TestDuckDBReads(t *testing.T) {
	evs := events()
	p := write(t, parquetfile.Options{Origin: true}, evs, evs)
	from := "read_parquet(" + duckdbtest.Quote(p) + ")"
	rs := duckdbtest.Query(t,
		"DESCRIBE SELECT * FROM "+from,
		"SELECT count(*) AS n, sum(count) AS count, sum(speed) AS speed, sum(precise) AS precise, sum(neg) AS neg, "+
			"count(count) AS counted, min(time)::VARCHAR AS first, "+
			"count(*) FILTER (WHERE \"on\") AS \"on\", sum(huge) AS huge FROM "+from,
		"SELECT logical_type FROM parquet_schema("+duckdbtest.Quote(p)+") WHERE name = 'time'",
		"SELECT id, tenant, \"table\", series, name, hex(raw) AS raw, fields_json FROM "+from+" WHERE id = 'id-3'",
	)
	types := map[string]string{}
	var order []string
	for _, r := range rs[0].Rows {
		types[r["column_name"].(string)] = r["column_type"].(string)
		order = append(order, r["column_name"].(string))
	}
	require.Equal(t, []string{"tenant", "table", "time", "series", "id", "count", "fine", "huge", "name", "neg", "on", "precise", "raw", "speed", "fields_json"}, order)
	require.Equal(t, map[string]string{
		"tenant": "VARCHAR", "table": "VARCHAR", "time": "TIMESTAMP WITH TIME ZONE", "series": "VARCHAR", "id": "VARCHAR",
		"count": "BIGINT", "fine": "DOUBLE", "huge": "DOUBLE", "name": "VARCHAR", "neg": "DECIMAL(38,9)", "on": "BOOLEAN",
		"precise": "DECIMAL(38,9)", "raw": "BLOB", "speed": "DECIMAL(38,9)", "fields_json": "JSON",
	}, types)
	sums := rs[1].Rows[0]
	require.InEpsilon(t, 5.5e101, sums["huge"], 1e-15)
	delete(sums, "huge")
	// DuckDB reads a UTC-adjusted timestamp as TIMESTAMP WITH TIME ZONE,
	// to the microsecond; the file holds the nanoseconds, as its schema
	// says and TestNanoseconds reads.
	require.Equal(t, map[string]any{
		"n": "10", "count": "42000", "speed": "849.500000000", "precise": "12345678901234567890123450.000004500",
		"neg": "-0.500000000", "counted": "9", "first": "2017-04-10 12:00:00.123456+00", "on": "5",
	}, sums)
	require.Contains(t, rs[2].Rows[0]["logical_type"], "NANOS")
	require.Contains(t, rs[2].Rows[0]["logical_type"], "isAdjustedToUTC=1")
	row := rs[3].Rows[0]
	require.Equal(t, "acme", row["tenant"])
	require.Equal(t, "cars", row["table"])
	require.Equal(t, "car-3", row["name"])
	require.Equal(t, "03FF", row["raw"])
	var extra map[string]any
	require.NoError(t, json.Unmarshal([]byte(row["fields_json"].(string)), &extra))
	require.Equal(t, map[string]any{"mixed": "one", "tags": []any{"a", 1.0}, "Time": "taken", "seats": nil}, extra)
}

// TestNanoseconds reads the time column's values as parquet-go gives
// them: every nanosecond is there.
func TestNanoseconds(t *testing.T) {
	evs := events()
	p := write(t, parquetfile.Options{}, evs, evs)
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	type row struct {
		Time int64 `parquet:"time"`
	}
	rows, err := parquet.Read[row](f, mustSize(t, f))
	require.NoError(t, err)
	require.Len(t, rows, len(evs))
	for i, r := range rows {
		require.Equal(t, evs[i].Time.UnixNano(), r.Time)
	}
}

func mustSize(t *testing.T, f *os.File) int64 {
	st, err := f.Stat()
	require.NoError(t, err)
	return st.Size()
}

// TestSpoolLearnsFromEveryEvent writes through a Spool events whose
// fields change after many rows: a fraction in a field of integers, a
// string in a field of numbers, a field first seen last. Every field gets
// a column that holds every value, or fields_json holds them all: DuckDB's
// sum covers every row.
func TestSpoolLearnsFromEveryEvent(t *testing.T) {
	s, err := parquetfile.NewSpool(t.TempDir(), parquetfile.Options{})
	require.NoError(t, err)
	defer s.Close()
	const n = 12_000
	for i := range n {
		f := map[string]any{"i": json.Number(fmt.Sprint(i)), "x": json.Number("1"), "nested": []any{nil, map[string]any{"a": nil}}}
		switch {
		case i == n-1:
			f["i"] = json.Number("0.5")
			f["x"] = "one"
			f["late"] = true
		case i%2 == 0:
			f["gap"] = nil
		}
		require.NoError(t, s.Add("", "", event.Event{Time: t0.Add(time.Duration(i)), Series: "s", ID: fmt.Sprint(i), Fields: f}))
	}
	p := filepath.Join(t.TempDir(), "events.parquet")
	out, err := os.Create(p)
	require.NoError(t, err)
	size, err := s.WriteTo(out)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, st.Size(), size)
	from := "read_parquet(" + duckdbtest.Quote(p) + ")"
	rs := duckdbtest.Query(t, "SELECT * FROM "+from+" LIMIT 0",
		"SELECT count(*) AS n, count(i) AS counted, sum(i)::VARCHAR AS i, count(late) AS late, "+
			"count(*) FILTER (WHERE fields_json->>'x' IS NOT NULL) AS x FROM "+from,
		"SELECT fields_json FROM "+from+" WHERE id = '0'")
	require.Equal(t, "DECIMAL(38,9)", rs[0].Type("i"))
	require.Equal(t, "BOOLEAN", rs[0].Type("late"))
	require.Equal(t, "", rs[0].Type("x"), "a field of two types is in fields_json, every value of it")
	require.Equal(t, map[string]any{"n": "12000", "counted": "12000", "i": fmt.Sprint((n-1)*(n-2)/2) + ".500000000", "late": "1", "x": "12000"}, rs[1].Rows[0])
	require.JSONEq(t, `{"x": 1, "nested": [null, {"a": null}], "gap": null}`, rs[2].Rows[0]["fields_json"].(string))
}

// TestOneTypeForEveryFile: files whose values of a field have different
// digits (archives of two periods, an export) type it alike.
func TestOneTypeForEveryFile(t *testing.T) {
	for _, o := range []parquetfile.Options{{}, {Origin: true}} {
		for _, v := range []string{"89.7", "1234.56789", "-0.000000001", "12345678901234567890.5"} {
			l := parquetfile.NewLearner(o)
			l.Learn(map[string]any{"v": json.Number(v)})
			require.Equal(t, []parquetfile.Column{{Name: "v", Kind: parquetfile.Decimal, Precision: 38, Scale: 9}}, l.Schema().Columns(), v)
		}
	}
}
