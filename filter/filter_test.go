package filter_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/storage"
)

func cmp(attr string, op storage.FilterOp, v any) storage.Filter {
	return storage.Filter{Op: op, Attr: attr, Value: v}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want storage.Filter
	}{
		{`level = "ERROR"`, cmp("level", storage.FilterEq, "ERROR")},
		{`level = "ERROR" and temp > 30`, storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{
			cmp("level", storage.FilterEq, "ERROR"), cmp("temp", storage.FilterGt, json.Number("30"))}}},
		{`a = 1 or b = 2 and c = 3`, storage.Filter{Op: storage.FilterOr, Args: []storage.Filter{
			cmp("a", storage.FilterEq, json.Number("1")),
			{Op: storage.FilterAnd, Args: []storage.Filter{cmp("b", storage.FilterEq, json.Number("2")), cmp("c", storage.FilterEq, json.Number("3"))}}}}},
		{`(a = 1 OR b = 2) AND NOT c <> 3`, storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{
			{Op: storage.FilterOr, Args: []storage.Filter{cmp("a", storage.FilterEq, json.Number("1")), cmp("b", storage.FilterEq, json.Number("2"))}},
			{Op: storage.FilterNot, Args: []storage.Filter{cmp("c", storage.FilterNe, json.Number("3"))}}}}},
		{`x != null`, cmp("x", storage.FilterNe, nil)},
		{`ok = true`, cmp("ok", storage.FilterEq, true)},
		{`v <= -1.50e1`, cmp("v", storage.FilterLe, json.Number("-15"))},
		{"`my field` >= \"a\\u00e9\"", cmp("my field", storage.FilterGe, "aé")},
		{`exists(speed)`, storage.Filter{Op: storage.FilterExists, Attr: "speed"}},
		{`begins_with(msg, "disk")`, storage.Filter{Op: storage.FilterBeginsWith, Attr: "msg", Value: "disk"}},
		{"`and` = 1", cmp("and", storage.FilterEq, json.Number("1"))},
		{"  a=1  ", cmp("a", storage.FilterEq, json.Number("1"))},
		{`v between 1 and 2.5`, storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{
			cmp("v", storage.FilterGe, json.Number("1")), cmp("v", storage.FilterLe, json.Number("2.5"))}}},
		{`host BETWEEN "a" AND "b" and x = 1`, storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{
			{Op: storage.FilterAnd, Args: []storage.Filter{cmp("host", storage.FilterGe, "a"), cmp("host", storage.FilterLe, "b")}},
			cmp("x", storage.FilterEq, json.Number("1"))}}},
		{`level in ("ERROR", "WARN", null)`, storage.Filter{Op: storage.FilterOr, Args: []storage.Filter{
			cmp("level", storage.FilterEq, "ERROR"), cmp("level", storage.FilterEq, "WARN"), cmp("level", storage.FilterEq, nil)}}},
		{`level IN ("ERROR")`, cmp("level", storage.FilterEq, "ERROR")},
		{`contains(msg, "disk")`, storage.Filter{Op: storage.FilterContains, Attr: "msg", Value: "disk"}},
		{`contains(tags, 7)`, storage.Filter{Op: storage.FilterContains, Attr: "tags", Value: json.Number("7")}},
		{`size(msg) > 10`, storage.Filter{Op: storage.FilterGt, Attr: "msg", Value: json.Number("10"), Size: true}},
		{`size(tags) between 1 and 3`, storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{
			{Op: storage.FilterGe, Attr: "tags", Value: json.Number("1"), Size: true}, {Op: storage.FilterLe, Attr: "tags", Value: json.Number("3"), Size: true}}}},
		{`size = 3`, cmp("size", storage.FilterEq, json.Number("3"))},
		{"`series` = \"x\"", cmp("series", storage.FilterEq, "x")},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := filter.Parse(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, *got)
			again, err := filter.Parse(filter.Format(*got))
			require.NoError(t, err, filter.Format(*got))
			require.Equal(t, *got, *again)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		in     string
		offset int
		msg    string
	}{
		{``, 0, "expected a field, not, ( or a function, found the end"},
		{`level = `, 8, "expected a string, number, true, false or null, found the end"},
		{`level == "x"`, 7, `expected a string, number, true, false or null, found "="`},
		{`temp > true`, 7, "> compares strings or numbers, not true"},
		{`a = 1 b = 2`, 6, `expected and, or or the end, found "b"`},
		{`(a = 1`, 6, "expected ), found the end"},
		{`a = "x`, 4, "an unterminated string"},
		{`a = 01`, 4, `a bad number "01"`},
		{`a = 1e999`, 4, `a number DynamoDB cannot hold "1e999"`},
		{`a = [1]`, 4, `found an unexpected "["`},
		{`a ! b`, 2, `"!" (write != or not)`},
		{`begins_with(a, 1)`, 15, "begins_with takes a string"},
		{`exists(a`, 8, "expected ), found the end"},
		{"`` = 1", 0, "an empty name"},
		{`a = "\x"`, 4, "a bad string"},
		{strings.Repeat("not ", 40) + "a = 1", 128, "nested more than 32 deep"},
		{strings.Repeat("a = 1 and ", 300) + "a = 1", 0, "operators, over DynamoDB's 300"},
		{strings.Repeat("x", 5000), 4096, "over the 4096-byte length limit"},
		{strings.Repeat("a = 1 or ", 149) + "a = 1", 0, "299 operators, over 298"},
		{"a = \"\xff\"", 5, "invalid UTF-8"},
		{`series = "car-17"`, 0, "series is not a field: select series with the series parameter"},
		{`x = 1 and time > 3`, 10, "time is not a field"},
		{`v between 2 and 1`, 16, "the lower bound is above the upper one"},
		{`v between 1 and "b"`, 16, "between takes two strings or two numbers"},
		{`v between true and 1`, 10, "between takes strings or numbers"},
		{`v between 1 or 2`, 12, "expected and in between"},
		{`v in (1, 2`, 10, "expected , or ), found the end"},
		{`v in 1`, 5, "expected ( after in"},
		{`v in (` + strings.Repeat("1, ", 100) + `1)`, 306, "in takes at most 100 values"},
		{`contains(a, true)`, 12, "contains takes a string or a number"},
		{`size(a) = "3"`, 10, "size compares to numbers"},
		{`size(a) in (1, "x")`, 15, "size compares to numbers"},
		{`v ~ 1`, 2, "an unexpected"},
	} {
		t.Run(tt.in[:min(len(tt.in), 40)], func(t *testing.T) {
			_, err := filter.Parse(tt.in)
			var se *filter.SyntaxError
			require.ErrorAs(t, err, &se)
			require.ErrorIs(t, err, storage.ErrBadFilter)
			require.Contains(t, se.Msg, tt.msg)
			require.Equal(t, tt.offset, se.Offset, se.Error())
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`level = "ERROR" and temp > 30`, `not (a < 1) or exists(b)`, "begins_with(`x y`, \"a\")", `a != null`, `a = -0.5e-3`, `v between 1 and 2`, `v in ("a", 1)`, `contains(s, "x")`, `size(l) >= 2`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := filter.Parse(s)
		if err != nil {
			require.ErrorIs(t, err, storage.ErrBadFilter)
			return
		}
		require.NoError(t, got.Validate())
		text := filter.Format(*got)
		again, err := filter.Parse(text)
		require.NoError(t, err, "%q formats as %q", s, text)
		require.Equal(t, *got, *again)
	})
}
