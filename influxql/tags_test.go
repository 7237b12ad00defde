package influxql

import (
	"testing"

	iql "github.com/influxdata/influxql"
	"github.com/stretchr/testify/require"
)

func TestTags(t *testing.T) {
	require.Equal(t, map[string]string{"host": "web 1", "region": "eu"}, Tags(`host=web\ 1,region=eu`))
	require.Equal(t, map[string]string{"series": "car-17"}, Tags("car-17"))
	require.Equal(t, map[string]string{}, Tags(""))
}

func TestMatchTags(t *testing.T) {
	tags := map[string]string{"host": "web1", "region": "eu", "rack": "7"}
	for _, tc := range []struct {
		cond string
		want bool
		err  string
	}{
		{`host = 'web1'`, true, ""},
		{`"host"::tag = 'web1'`, true, ""},
		{`host != 'web1'`, false, ""},
		{`host <> 'web2'`, true, ""},
		{`host =~ /^web/`, true, ""},
		{`host !~ /^web/`, false, ""},
		{`missing = ''`, true, ""},
		{`rack = 7`, true, ""},
		{`host = 'web2' OR (region = 'eu' AND rack != '8')`, true, ""},
		{`host = 'web1' AND region = 'us'`, false, ""},
		{`host > 'a'`, false, "use =, !=, =~ or !~"},
	} {
		got, err := matchTags(iql.MustParseExpr(tc.cond), tags)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.cond)
			continue
		}
		require.NoError(t, err, tc.cond)
		require.Equal(t, tc.want, got, tc.cond)
	}
}

func TestSplitCondition(t *testing.T) {
	isTag := func(k string) bool { return k == "host" || k == "region" }
	for _, tc := range []struct {
		cond, tags, fields, rows string
	}{
		{`host = 'a'`, `host = 'a'`, ``, ``},
		{`temp > 3`, ``, `temp > 3`, ``},
		{`host = 'a' AND (temp > 3 OR temp < 1) AND region =~ /e/`, `host = 'a' AND region =~ /e/`, `temp > 3 OR temp < 1`, ``},
		{`(host = 'a' OR region = 'b') AND temp = 1`, `host = 'a' OR region = 'b'`, `temp = 1`, ``},
		{`host = 'a' OR temp = 1`, ``, ``, `host = 'a' OR temp = 1`},
		{`host = temp AND region = 'b'`, `region = 'b'`, ``, `host = temp`},
	} {
		tagCond, fieldCond, rowCond, err := splitCondition(iql.MustParseExpr(tc.cond), isTag)
		require.NoError(t, err)
		str := func(e iql.Expr) string {
			if e == nil {
				return ""
			}
			return e.String()
		}
		require.Equal(t, tc.tags, str(tagCond), tc.cond)
		require.Equal(t, tc.fields, str(fieldCond), tc.cond)
		require.Equal(t, tc.rows, str(rowCond), tc.cond)
	}
}

// TestMeasurementMatches checks SHOW MEASUREMENTS WHERE as InfluxDB's
// in-memory index reads it: != and !~ list a measurement none of whose
// series has the value, and a tag no series has matches nothing.
func TestMeasurementMatches(t *testing.T) {
	series := []seriesTags{
		{name: "", tags: map[string]string{}},
		{name: "host=a", tags: map[string]string{"host": "a"}},
		{name: "host=a,region=eu", tags: map[string]string{"host": "a", "region": "eu"}},
	}
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{`host = 'a'`, true},
		{`host = 'b'`, false},
		{`host = ''`, false},
		{`host != 'b'`, true},
		{`host != 'a'`, false},
		{`region !~ /us/`, true},
		{`region !~ /e/`, false},
		{`dc != 'x'`, false},
		{`dc !~ /x/`, false},
		{`host = 'b' OR region = 'eu'`, true},
		{`host = 'a' AND region != 'eu'`, false},
		{`_name = 'cpu'`, true},
		{`_name != 'cpu'`, false},
	} {
		got, err := measurementMatches("cpu", series, iql.MustParseExpr(tc.cond))
		require.NoError(t, err, tc.cond)
		require.Equal(t, tc.want, got, tc.cond)
	}
}

// TestCutGroups checks that SLIMIT and SOFFSET keep the groups in the
// order of InfluxDB's tag set keys, the tags a group lacks left out,
// and answer them in the order of their values.
func TestCutGroups(t *testing.T) {
	keys := []string{"host", "region"}
	var groups []group
	for _, h := range []string{"", "a", "b"} {
		for _, r := range []string{"", "eu", "us"} {
			groups = append(groups, group{tags: map[string]string{"host": h, "region": r}})
		}
	}
	name := func(gs []group) []string {
		var out []string
		for _, g := range gs {
			out = append(out, g.tags["host"]+"/"+g.tags["region"])
		}
		return out
	}
	require.Equal(t, "host|region|a|eu", tagSetKey(keys, groups[4].tags))
	require.Equal(t, "", tagSetKey(keys, groups[0].tags))
	require.Equal(t, []string{"/", "a/", "a/eu", "b/"}, name(cutGroups(groups, keys, 0, 4)))
	require.Equal(t, []string{"/eu", "a/us", "b/eu", "b/us"}, name(cutGroups(groups, keys, 4, 4)))
	require.Equal(t, name(groups), name(cutGroups(groups, keys, 0, 0)))
}
