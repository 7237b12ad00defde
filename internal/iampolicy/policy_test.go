package iampolicy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEvaluate(t *testing.T) {
	const table = "arn:aws:dynamodb:eu-west-1:111122223333:table/tt_a_2017"
	own := map[string][]string{"aws:ResourceTag/timetable:meta": {"meta_a"}}
	other := map[string][]string{"aws:ResourceTag/timetable:meta": {"meta_b"}}
	statements := []Statement{
		{Sid: "Own", Effect: Allow, Action: []string{"dynamodb:Update*", "dynamodb:DeleteTable"},
			Resource:  []string{"arn:aws:dynamodb:eu-west-1:111122223333:table/tt_*"},
			Condition: map[string]map[string][]string{"StringEquals": {"aws:ResourceTag/timetable:meta": {"meta_a"}}}},
		{Sid: "Tag", Effect: Allow, Action: []string{"dynamodb:TagResource"}, Resource: []string{"*"},
			Condition: map[string]map[string][]string{
				"Null":                        {"aws:ResourceTag/timetable:meta": {"true"}},
				"StringEquals":                {"aws:RequestTag/timetable:meta": {"meta_a"}},
				"ForAllValues:StringLike":     {"aws:TagKeys": {"timetable:*"}},
				"StringNotEqualsIfExists":     {"aws:RequestTag/owner": {"mallory"}},
				"ForAnyValue:StringNotEquals": {"aws:TagKeys": {"nothing"}},
			}},
		{Sid: "NoProd", Effect: Deny, NotAction: []string{"dynamodb:Describe*"}, Resource: []string{"*prod*"}},
		{Sid: "Var", Effect: Allow, Action: []string{"s3:GetObject"}, Resource: []string{"arn:aws:s3:::b/${aws:username}/*"}},
	}
	for _, c := range []struct {
		name string
		r    Request
		want Decision
		sid  string
	}{
		{"own table", Request{"dynamodb:UpdateTable", table, own}, Allowed, "Own"},
		{"action is case-insensitive", Request{"DynamoDB:updatetable", table, own}, Allowed, "Own"},
		{"other's table", Request{"dynamodb:UpdateTable", table, other}, ImplicitDeny, ""},
		{"untagged table", Request{"dynamodb:DeleteTable", table, nil}, ImplicitDeny, ""},
		{"resource outside", Request{"dynamodb:UpdateTable", "arn:aws:dynamodb:eu-west-1:111122223333:table/xx", own}, ImplicitDeny, ""},
		{"resource is case-sensitive", Request{"dynamodb:UpdateTable", "arn:aws:dynamodb:eu-west-1:111122223333:table/TT_a", own}, ImplicitDeny, ""},
		{"action not granted", Request{"dynamodb:Scan", table, own}, ImplicitDeny, ""},
		{"tag an untagged table", Request{"dynamodb:TagResource", table, map[string][]string{
			"aws:RequestTag/timetable:meta": {"meta_a"}, "aws:TagKeys": {"timetable:meta", "timetable:family"}}}, Allowed, "Tag"},
		{"tag with a foreign key", Request{"dynamodb:TagResource", table, map[string][]string{
			"aws:RequestTag/timetable:meta": {"meta_a"}, "aws:TagKeys": {"timetable:meta", "owner"}}}, ImplicitDeny, ""},
		{"tag as mallory", Request{"dynamodb:TagResource", table, map[string][]string{
			"aws:RequestTag/timetable:meta": {"meta_a"}, "aws:RequestTag/owner": {"mallory"}, "aws:TagKeys": {"timetable:meta"}}}, ImplicitDeny, ""},
		{"tag another's value", Request{"dynamodb:TagResource", table, map[string][]string{
			"aws:RequestTag/timetable:meta": {"meta_b"}, "aws:TagKeys": {"timetable:meta"}}}, ImplicitDeny, ""},
		{"retag a tagged table", Request{"dynamodb:TagResource", table, map[string][]string{
			"aws:ResourceTag/timetable:meta": {"meta_b"}, "aws:RequestTag/timetable:meta": {"meta_a"}, "aws:TagKeys": {"timetable:meta"}}}, ImplicitDeny, ""},
		{"explicit deny wins", Request{"dynamodb:UpdateTable", "arn:aws:dynamodb:eu-west-1:111122223333:table/tt_prod", own}, ExplicitDeny, "NoProd"},
		{"NotAction spares", Request{"dynamodb:DescribeTable", "arn:aws:dynamodb:eu-west-1:111122223333:table/tt_prod", own}, ImplicitDeny, ""},
		{"policy variable", Request{"s3:GetObject", "arn:aws:s3:::b/ann/x", map[string][]string{"aws:username": {"ann"}}}, Allowed, "Var"},
		{"policy variable of another", Request{"s3:GetObject", "arn:aws:s3:::b/bob/x", map[string][]string{"aws:username": {"ann"}}}, ImplicitDeny, ""},
		{"policy variable missing", Request{"s3:GetObject", "arn:aws:s3:::b/ann/x", nil}, ImplicitDeny, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, s, err := Evaluate(statements, c.r)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			if c.sid == "" {
				require.Nil(t, s)
			} else {
				require.Equal(t, c.sid, s.Sid)
			}
		})
	}
}

func TestConditionOperators(t *testing.T) {
	for _, c := range []struct {
		op         string
		want, have []string
		ok         bool
	}{
		{"StringEquals", []string{"a", "b"}, []string{"b"}, true},
		{"StringEquals", []string{"a"}, nil, false},
		{"StringEqualsIfExists", []string{"a"}, nil, true},
		{"StringEqualsIfExists", []string{"a"}, []string{"c"}, false},
		{"StringNotEquals", []string{"a"}, nil, true},
		{"StringNotEquals", []string{"a"}, []string{"a"}, false},
		{"StringLike", []string{"tt_*"}, []string{"tt_x"}, true},
		{"StringLike", []string{"?*"}, []string{""}, false},
		{"StringLike", []string{"a${*}"}, []string{"a*"}, true},
		{"StringLike", []string{"a${*}"}, []string{"ab"}, false},
		{"StringNotLike", []string{"tt_*"}, []string{"xx"}, true},
		{"ForAllValues:StringEquals", []string{"a", "b"}, []string{"a", "b"}, true},
		{"ForAllValues:StringEquals", []string{"a"}, []string{"a", "b"}, false},
		{"ForAllValues:StringEquals", []string{"a"}, nil, true},
		{"ForAllValues:StringLike", []string{"timetable:*"}, []string{"timetable:meta"}, true},
		{"ForAnyValue:StringEquals", []string{"a"}, []string{"c", "a"}, true},
		{"ForAnyValue:StringEquals", []string{"a"}, nil, false},
		{"ForAllValues:StringNotEquals", []string{"timetable:meta"}, []string{"x", "y"}, true},
		{"ForAllValues:StringNotEquals", []string{"timetable:meta"}, []string{"x", "timetable:meta"}, false},
		{"Null", []string{"true"}, nil, true},
		{"Null", []string{"true"}, []string{"x"}, false},
		{"Null", []string{"false"}, []string{"x"}, true},
		{"Bool", []string{"true"}, []string{"True"}, true},
	} {
		got, err := condition(c.op, c.want, c.have, nil)
		require.NoError(t, err, c.op)
		require.Equal(t, c.ok, got, "%s %v on %v", c.op, c.want, c.have)
	}
	_, err := condition("NumericLessThan", []string{"1"}, []string{"0"}, nil)
	require.ErrorContains(t, err, "not supported")
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, v string
		ok   bool
	}{
		{"*", "", true}, {"a*c", "abbbc", true}, {"a*c", "abbb", false}, {"a?c", "abc", true},
		{"a?c", "ac", false}, {"*/export/*", "table/x/export/1", true}, {"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxcyyb", false}, {`a\*`, "a*", true}, {`a\*`, "ab", false},
	} {
		require.Equal(t, c.ok, glob(c.p, c.v), "%q ~ %q", c.p, c.v)
	}
}
