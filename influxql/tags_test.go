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
		got, err := matchTags(iql.MustParseExpr(tc.cond), tags, false)
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
