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
	if err := s.enter(); err != nil {
		return errIterator(err)
	}
	defer s.calls.Done()

	pages := dynamodb.NewScanPaginator(s.client, &dynamodb.ScanInput{
		TableName:              aws.String(table),
		ConsistentRead:         s.consistentRead(),
		ReturnConsumedCapacity: returnCapacity,
	})
	return newIterator(ctx, s, 0, func(ctx context.Context) ([]map[string]types.AttributeValue, bool, error) {
		out, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return nil, false, fmt.Errorf("scan table %q: %w", table, mapError(opRead, err))
		}
		return out.Items, pages.HasMorePages(), nil
	})
}
