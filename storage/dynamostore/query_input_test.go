package dynamostore

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

func TestQueryInput(t *testing.T) {
	// cond renders the key condition with names and values substituted.
	type want struct {
		empty bool
		cond  string // "" when there is no sort-key condition
		start string // ExclusiveStartKey's sort key, "" for none
	}
	for _, tc := range []struct {
		name string
		q    storage.Query
		want want
	}{
		{"whole partition", storage.Query{}, want{}},
		{"from low", storage.Query{Low: "b"}, want{cond: "sk >= b"}},
		{"up to high", storage.Query{High: "y"}, want{cond: "sk <= y"}},
		{"between", storage.Query{Low: "b", High: "y"}, want{cond: "sk BETWEEN b AND y"}},
		{"low above high", storage.Query{Low: "z", High: "y"}, want{empty: true}},
		{"empty partition key", storage.Query{PK: "-"}, want{empty: true}},

		{"asc after inside", storage.Query{Low: "b", High: "y", After: "m"}, want{cond: "sk BETWEEN b AND y", start: "m"}},
		{"asc after at low", storage.Query{Low: "b", High: "y", After: "b"}, want{cond: "sk BETWEEN b AND y", start: "b"}},
		{"asc after before low", storage.Query{Low: "b", High: "y", After: "a"}, want{cond: "sk BETWEEN b AND y"}},
		{"asc after at high", storage.Query{Low: "b", High: "y", After: "y"}, want{empty: true}},
		{"asc after past high", storage.Query{Low: "b", High: "y", After: "z"}, want{empty: true}},
		{"asc after, no bounds", storage.Query{After: "m"}, want{start: "m"}},

		{"desc after inside", storage.Query{Low: "b", High: "y", After: "m", Desc: true}, want{cond: "sk BETWEEN b AND y", start: "m"}},
		{"desc after at high", storage.Query{Low: "b", High: "y", After: "y", Desc: true}, want{cond: "sk BETWEEN b AND y", start: "y"}},
		{"desc after past high", storage.Query{Low: "b", High: "y", After: "z", Desc: true}, want{cond: "sk BETWEEN b AND y"}},
		{"desc after at low", storage.Query{Low: "b", High: "y", After: "b", Desc: true}, want{empty: true}},
		{"desc after before low", storage.Query{Low: "b", High: "y", After: "a", Desc: true}, want{empty: true}},
		{"desc after, no low", storage.Query{High: "y", After: "c", Desc: true}, want{cond: "sk <= y", start: "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Table = "t"
			if q.PK == "-" {
				q.PK = ""
			} else {
				q.PK = "p"
			}
			in, empty, err := queryInput(q)
			require.NoError(t, err)
			require.Equal(t, tc.want.empty, empty)
			if empty {
				return
			}
			require.Equal(t, !q.Desc, *in.ScanIndexForward)
			cond := render(*in.KeyConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
			wantCond := "pk = p"
			if tc.want.cond != "" {
				wantCond = "(" + wantCond + ") AND (" + tc.want.cond + ")"
			}
			require.Equal(t, wantCond, cond)
			if tc.want.start == "" {
				require.Nil(t, in.ExclusiveStartKey)
			} else {
				require.Equal(t, map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "p"},
					"sk": &types.AttributeValueMemberS{Value: tc.want.start},
				}, in.ExclusiveStartKey)
			}
		})
	}
}

func TestQueryInputLimitAndProjection(t *testing.T) {
	in, _, err := queryInput(storage.Query{Table: "t", PK: "p", Limit: 7, Attrs: []string{"a.b", "sk", "c", "a.b"}})
	require.NoError(t, err)
	require.Equal(t, int32(7), *in.Limit)
	require.Equal(t, "pk, sk, a.b, c", render(*in.ProjectionExpression, in.ExpressionAttributeNames, nil),
		"keys always, each name once, dots not split")

	in, _, err = queryInput(storage.Query{Table: "t", PK: "p", Attrs: []string{}})
	require.NoError(t, err)
	require.Equal(t, "pk, sk", render(*in.ProjectionExpression, in.ExpressionAttributeNames, nil), "keys only")

	in, _, err = queryInput(storage.Query{Table: "t", PK: "p"})
	require.NoError(t, err)
	require.Nil(t, in.ProjectionExpression, "every attribute")
	require.Nil(t, in.Limit)
}

// render substitutes the placeholders of an expression, longest first.
func render(expr string, names map[string]string, values map[string]types.AttributeValue) string {
	var subst []string
	for k, v := range names {
		subst = append(subst, k, v)
	}
	for k, v := range values {
		subst = append(subst, k, v.(*types.AttributeValueMemberS).Value)
	}
	return replaceAll(expr, subst)
}

// replaceAll replaces the longest matching placeholder at each position,
// so that #10 is not read as #1 followed by 0.
func replaceAll(s string, pairs []string) string {
	var out []byte
	for i := 0; i < len(s); {
		best := -1
		for j := 0; j < len(pairs); j += 2 {
			p := pairs[j]
			if len(s)-i >= len(p) && s[i:i+len(p)] == p && (best < 0 || len(p) > len(pairs[best])) {
				best = j
			}
		}
		if best < 0 {
			out = append(out, s[i])
			i++
			continue
		}
		out = append(out, pairs[best+1]...)
		i += len(pairs[best])
	}
	return string(out)
}
