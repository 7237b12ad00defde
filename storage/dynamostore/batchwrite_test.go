package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

func TestWriteRequestsValidation(t *testing.T) {
	big := strings.Repeat("x", storage.MaxItemSize)
	ok := storage.Item{PK: "p", SK: "a", Attrs: map[string]any{"v": "x"}}
	for _, tc := range []struct {
		name  string
		items []storage.Item
		want  string
	}{
		{"valid", []storage.Item{ok, {PK: "p", SK: "b"}}, ""},
		{"empty pk", []storage.Item{ok, {SK: "b"}}, "item 1: timetable: invalid item: empty partition key"},
		{"empty sk", []storage.Item{{PK: "p"}}, "item 0: timetable: invalid item: empty sort key"},
		{"duplicate", []storage.Item{ok, {PK: "q", SK: "a"}, ok}, "item 2: same key as item 0"},
		{"too large", []storage.Item{{PK: "p", SK: "a", Attrs: map[string]any{"v": big}}}, "over DynamoDB's limit"},
		{"largest allowed", []storage.Item{{PK: "p", SK: "a", Attrs: map[string]any{"v": big[:storage.MaxItemSize-len("pkpskav")]}}}, ""},
		{"bad type", []storage.Item{{PK: "p", SK: "a", Attrs: map[string]any{"v": 3}}}, `item 0: timetable: invalid item: v: value of type int, not a storage attribute type`},
		{"bad number", []storage.Item{{PK: "p", SK: "a", Attrs: map[string]any{"v": json.Number("x")}}}, "v: not a JSON number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, err := writeRequests(tc.items)
			if tc.want == "" {
				require.NoError(t, err)
				require.Len(t, reqs, len(tc.items))
				return
			}
			require.ErrorIs(t, err, storage.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}

	many := make([]storage.Item, 30)
	_, err := writeRequests(many)
	require.ErrorContains(t, err, "and 20 more invalid items")
}

func TestBatchWriteNativeTypes(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	name := createTable(t, s, storage.TableSpec{})
	it := storage.Item{PK: "car-17", SK: "2017-04-10T12:00:00.123456Z", Attrs: map[string]any{
		"speed": json.Number("88.5"),
		"gear":  "D",
		"on":    true,
		"none":  nil,
		"raw":   []byte{1, 2, 3},
		"list":  []any{json.Number("1"), "two"},
		"map":   map[string]any{"lat": json.Number("48.1"), "ok": false},
	}}
	require.NoError(t, s.BatchWrite(ctx, name, []storage.Item{it}))

	// What any DynamoDB client reads: native types, not JSON strings.
	out, err := s.Client().GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(name),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: it.PK},
			"sk": &types.AttributeValueMemberS{Value: it.SK},
		},
	})
	require.NoError(t, err)
	require.Equal(t, map[string]types.AttributeValue{
		"pk":    &types.AttributeValueMemberS{Value: "car-17"},
		"sk":    &types.AttributeValueMemberS{Value: "2017-04-10T12:00:00.123456Z"},
		"speed": &types.AttributeValueMemberN{Value: "88.5"},
		"gear":  &types.AttributeValueMemberS{Value: "D"},
		"on":    &types.AttributeValueMemberBOOL{Value: true},
		"none":  &types.AttributeValueMemberNULL{Value: true},
		"raw":   &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},
		"list": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberN{Value: "1"}, &types.AttributeValueMemberS{Value: "two"},
		}},
		"map": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"lat": &types.AttributeValueMemberN{Value: "48.1"}, "ok": &types.AttributeValueMemberBOOL{Value: false},
		}},
	}, out.Item)

	got, err := s.GetItem(ctx, name, it.PK, it.SK)
	require.NoError(t, err)
	require.Equal(t, it, got)
	_, err = s.GetItem(ctx, name, it.PK, "other")
	require.ErrorIs(t, err, storage.ErrItemNotFound)
}

func TestBatchWriteRequests(t *testing.T) {
	counter := &requestCounter{}
	s := openStore(t, Options{WriteConcurrency: 3, ClientOptions: []func(*dynamodb.Options){counter.install}})
	ctx := context.Background()
	name := createTable(t, s, storage.TableSpec{})
	for _, n := range []int{1, 25, 26, 1001} {
		items := make([]storage.Item, n)
		for i := range items {
			items[i] = storage.Item{PK: fmt.Sprintf("p%d", n), SK: fmt.Sprintf("%06d", i), Attrs: map[string]any{"i": json.Number(fmt.Sprint(i))}}
		}
		counter.reset()
		require.NoError(t, s.BatchWrite(ctx, name, items))
		require.Equal(t, (n+batchSize-1)/batchSize, counter.count("BatchWriteItem"), "%d items in requests of 25", n)
		got := drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: items[0].PK}))
		require.Equal(t, items, got)
	}
	require.NoError(t, s.BatchWrite(ctx, name, nil), "nothing to write")
}

func TestBatchWriteFailures(t *testing.T) {
	s := openStore(t, Options{})
	name := createTable(t, s, storage.TableSpec{})
	items := make([]storage.Item, 60)
	for i := range items {
		items[i] = storage.Item{PK: "p", SK: fmt.Sprintf("%03d", i)}
	}

	t.Run("invalid item writes nothing", func(t *testing.T) {
		bad := append([]storage.Item(nil), items...)
		bad[59].Attrs = map[string]any{"f": 1.5}
		err := s.BatchWrite(context.Background(), name, bad)
		var we *storage.BatchWriteError
		require.ErrorAs(t, err, &we)
		require.Equal(t, allIndexes(60), we.Unwritten)
		require.ErrorIs(t, err, storage.ErrInvalid)
		require.Empty(t, drainItems(t, s.Scan(context.Background(), name)))
	})
	t.Run("unknown table", func(t *testing.T) {
		err := s.BatchWrite(context.Background(), tableName(t), items)
		var we *storage.BatchWriteError
		require.ErrorAs(t, err, &we)
		require.Equal(t, allIndexes(60), we.Unwritten)
		require.ErrorIs(t, err, storage.ErrTableNotFound)
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := s.BatchWrite(ctx, name, items)
		var we *storage.BatchWriteError
		require.ErrorAs(t, err, &we)
		require.Equal(t, allIndexes(60), we.Unwritten)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// drainItems reads an iterator to its end and closes it.
func drainItems(t *testing.T, it storage.Iterator) []storage.Item {
	t.Helper()
	defer it.Close()
	var items []storage.Item
	for it.Next() {
		items = append(items, it.Item())
	}
	require.NoError(t, it.Err())
	return items
}
