package dynamostore

import (
	"context"
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// Query returns the items of one partition in the sort-key range, in the
// order asked. It follows DynamoDB's pages lazily with the SDK paginator,
// each page asking for at most q.Limit items, so the iterator over-reads by
// at most one page. Resuming with q.After set to the sort key of the last
// item returned neither skips nor repeats an item, wherever DynamoDB's
// 1 MB pages or the limit cut.
func (s *Store) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if err := s.enter(); err != nil {
		return errIterator(err)
	}
	defer s.calls.Done()

	in, empty, err := queryInput(q)
	if err != nil {
		return errIterator(fmt.Errorf("query table %q: %w", q.Table, err))
	}
	if empty {
		return emptyIterator()
	}
	in.ConsistentRead = s.consistentRead()
	in.ReturnConsumedCapacity = returnCapacity
	pages := dynamodb.NewQueryPaginator(s.client, in)
	return newIterator(ctx, s, q.Limit, func(ctx context.Context) ([]map[string]types.AttributeValue, bool, error) {
		out, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return nil, false, fmt.Errorf("query table %q: %w", q.Table, mapError(opOther, err))
		}
		return out.Items, pages.HasMorePages(), nil
	})
}

// queryInput builds the Query request for q. empty is true when no item can
// match, and no request need be sent.
//
// DynamoDB refuses an ExclusiveStartKey outside the key condition, while
// storage lets After lie anywhere. So After becomes the start key only
// inside the range: before the range (in the query's direction) it changes
// nothing, past the range it leaves nothing.
func queryInput(q storage.Query) (in *dynamodb.QueryInput, empty bool, err error) {
	low, high, after := q.Low, q.High, q.After
	if q.PK == "" || (high != "" && low > high) {
		// No item has an empty partition key: BatchWrite refuses them.
		return nil, true, nil
	}
	if after != "" {
		if !q.Desc {
			if high != "" && after >= high {
				return nil, true, nil
			}
			if after < low {
				after = ""
			}
		} else {
			if after <= low {
				return nil, true, nil
			}
			if high != "" && after > high {
				after = ""
			}
		}
	}

	cond := expression.Key(storage.PKAttr).Equal(expression.Value(q.PK))
	sk := expression.Key(storage.SKAttr)
	switch {
	case low != "" && high != "":
		cond = cond.And(sk.Between(expression.Value(low), expression.Value(high)))
	case low != "":
		cond = cond.And(sk.GreaterThanEqual(expression.Value(low)))
	case high != "":
		cond = cond.And(sk.LessThanEqual(expression.Value(high)))
	}
	b := expression.NewBuilder().WithKeyCondition(cond)
	if q.Attrs != nil {
		proj := expression.NamesList(expression.NameNoDotSplit(storage.PKAttr), expression.NameNoDotSplit(storage.SKAttr))
		seen := map[string]bool{storage.PKAttr: true, storage.SKAttr: true}
		for _, a := range q.Attrs {
			if !seen[a] {
				// DynamoDB refuses a projection naming an attribute twice.
				seen[a] = true
				proj = proj.AddNames(expression.NameNoDotSplit(a))
			}
		}
		b = b.WithProjection(proj)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, false, fmt.Errorf("build expression: %w", err)
	}

	in = &dynamodb.QueryInput{
		TableName:                 aws.String(q.Table),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(!q.Desc),
	}
	if q.Limit > 0 {
		in.Limit = aws.Int32(int32(min(q.Limit, math.MaxInt32)))
	}
	if after != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			storage.PKAttr: &types.AttributeValueMemberS{Value: q.PK},
			storage.SKAttr: &types.AttributeValueMemberS{Value: after},
		}
	}
	return in, false, nil
}
