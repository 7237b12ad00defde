package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// Scan returns every item of the table, fetching DynamoDB's pages of up to
// 1 MB one at a time as the iterator needs them.
func (s *Store) Scan(ctx context.Context, table string) storage.Iterator {
	return s.ScanAfter(ctx, table, storage.Key{})
}

// ScanAfter is Scan from the item after the key: its ExclusiveStartKey.
func (s *Store) ScanAfter(ctx context.Context, table string, after storage.Key) storage.Iterator {
	return s.scan(ctx, table, storage.Segment{Total: 1, After: after})
}

// ScanSegment is DynamoDB's parallel Scan: Segment and TotalSegments
// (when Total is more than 1), each segment's pages fetched as its
// iterator needs them, eventually consistent when seg.Eventual says so.
func (s *Store) ScanSegment(ctx context.Context, table string, seg storage.Segment) storage.Iterator {
	if err := seg.Validate(); err != nil {
		return errIterator(fmt.Errorf("scan table %q: %w", table, err))
	}
	return s.scan(ctx, table, seg)
}

func (s *Store) scan(ctx context.Context, table string, seg storage.Segment) storage.Iterator {
	if err := s.gate.Enter(); err != nil {
		return errIterator(err)
	}
	defer s.gate.Exit()

	in := &dynamodb.ScanInput{
		TableName:              aws.String(table),
		ConsistentRead:         s.consistentRead(),
		ReturnConsumedCapacity: returnCapacity,
	}
	if seg.Eventual {
		in.ConsistentRead = aws.Bool(false)
	}
	if seg.Total > 1 {
		in.Segment = aws.Int32(int32(seg.Index))
		in.TotalSegments = aws.Int32(int32(seg.Total))
	}
	after := seg.After
	if after != (storage.Key{}) {
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			storage.PKAttr: &types.AttributeValueMemberS{Value: after.PK},
			storage.SKAttr: &types.AttributeValueMemberS{Value: after.SK},
		}
	}
	pages := dynamodb.NewScanPaginator(s.client, in)
	return newIterator(ctx, s, 0, false, func(ctx context.Context, _ int) (page, error) {
		out, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return page{}, fmt.Errorf("scan table %q: %w", table, mapError(opOther, err))
		}
		return page{items: out.Items, more: pages.HasMorePages(), examined: int(out.ScannedCount), lastSK: lastSortKey(out.LastEvaluatedKey)}, nil
	})
}
