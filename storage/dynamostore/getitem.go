package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// GetItem reads one item, strongly consistent unless the store was opened
// with EventuallyConsistent.
func (s *Store) GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	return s.getItem(ctx, table, pk, sk, s.consistentRead())
}

// GetItemEventual is GetItem read eventually consistently, at half the
// read units: it may miss a write that returned less than about a second
// ago (DynamoDB's replication lag, usually under a second).
func (s *Store) GetItemEventual(ctx context.Context, table, pk, sk string) (storage.Item, error) {
	return s.getItem(ctx, table, pk, sk, aws.Bool(false))
}

func (s *Store) getItem(ctx context.Context, table, pk, sk string, consistent *bool) (storage.Item, error) {
	if err := s.gate.Enter(); err != nil {
		return storage.Item{}, err
	}
	defer s.gate.Exit()

	if pk == "" || sk == "" {
		// DynamoDB refuses empty key values; no such item can exist.
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, table, storage.ErrItemNotFound)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			storage.PKAttr: &types.AttributeValueMemberS{Value: pk},
			storage.SKAttr: &types.AttributeValueMemberS{Value: sk},
		},
		ConsistentRead:         consistent,
		ReturnConsumedCapacity: returnCapacity,
	}, s.callOpts...)
	if err != nil {
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, table, mapError(opOther, err))
	}
	if out.Item == nil {
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, table, storage.ErrItemNotFound)
	}
	it, err := unmarshalItem(out.Item)
	if err != nil {
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, table, err)
	}
	return it, nil
}
