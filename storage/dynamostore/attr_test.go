package dynamostore

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

func TestAttributeValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		av   types.AttributeValue
	}{
		{"null", nil, &types.AttributeValueMemberNULL{Value: true}},
		{"bool", true, &types.AttributeValueMemberBOOL{Value: true}},
		{"string", "D", &types.AttributeValueMemberS{Value: "D"}},
		{"number", json.Number("88.5"), &types.AttributeValueMemberN{Value: "88.5"}},
		{"binary", []byte{0, 1, 2}, &types.AttributeValueMemberB{Value: []byte{0, 1, 2}}},
		{"list", []any{"a", json.Number("1"), nil}, &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "a"},
			&types.AttributeValueMemberN{Value: "1"},
			&types.AttributeValueMemberNULL{Value: true},
		}}},
		{"map", map[string]any{"x": false, "y": []any{}}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"x": &types.AttributeValueMemberBOOL{Value: false},
			"y": &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			av, err := toAttributeValue(tc.v)
			require.NoError(t, err)
			require.Equal(t, tc.av, av)
			v, err := fromAttributeValue(av)
			require.NoError(t, err)
			require.Equal(t, tc.v, v)
		})
	}
}

func TestAttributeValueRefused(t *testing.T) {
	for _, v := range []any{42, 1.5, json.Number("1e"), json.Number(""), []string{"a"}, map[string]string{}, []any{struct{}{}}} {
		_, err := toAttributeValue(v)
		require.Error(t, err, "%#v", v)
	}
}

func TestSetsReadAsLists(t *testing.T) {
	for _, tc := range []struct {
		av   types.AttributeValue
		want any
	}{
		{&types.AttributeValueMemberSS{Value: []string{"a", "b"}}, []any{"a", "b"}},
		{&types.AttributeValueMemberNS{Value: []string{"1", "2.5"}}, []any{json.Number("1"), json.Number("2.5")}},
		{&types.AttributeValueMemberBS{Value: [][]byte{{1}}}, []any{[]byte{1}}},
	} {
		v, err := fromAttributeValue(tc.av)
		require.NoError(t, err)
		require.Equal(t, tc.want, v)
	}
}

// TestNumbersSentCanonical checks that numbers go to DynamoDB in the one
// form every backend stores (storage.CanonicalNumber), and that what it
// refuses is refused before sending.
func TestNumbersSentCanonical(t *testing.T) {
	av, err := toAttributeValue(json.Number("88.50e1"))
	require.NoError(t, err)
	require.Equal(t, &types.AttributeValueMemberN{Value: "885"}, av)
	for _, s := range []string{"+1", "007", ".5", "1e126"} {
		_, err := toAttributeValue(json.Number(s))
		require.ErrorIs(t, err, storage.ErrInvalid, s)
	}
}

func TestMarshalItem(t *testing.T) {
	m, err := marshalItem(storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"a": "x"}})
	require.NoError(t, err)
	require.Equal(t, map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "p"},
		"sk": &types.AttributeValueMemberS{Value: "s"},
		"a":  &types.AttributeValueMemberS{Value: "x"},
	}, m)
	it, err := unmarshalItem(m)
	require.NoError(t, err)
	require.Equal(t, storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"a": "x"}}, it)

	_, err = marshalItem(storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"sk": "x"}})
	require.Error(t, err, "an attribute named like a key")
	_, err = unmarshalItem(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberN{Value: "1"}})
	require.Error(t, err, "a key that is not a string")
}
