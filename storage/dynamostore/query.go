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
// order asked. It follows DynamoDB's pages lazily, each request asking
// for no more items than the limit leaves (items returned, or with a
// filter items examined: DynamoDB's own Limit), so the iterator never
// reads past its limit. Resuming with q.After set to the sort key of the
// last item returned, or to Resume's key, neither skips nor repeats an
// item, wherever DynamoDB's 1 MB pages or the limit cut.
//
// The pages are fetched by hand rather than with the SDK's paginator,
// whose Limit is fixed for every page.
func (s *Store) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if err := s.gate.Enter(); err != nil {
		return errIterator(err)
	}
	defer s.gate.Exit()

	in, empty, err := queryInput(q)
	if err != nil {
		return errIterator(fmt.Errorf("query table %q: %w", q.Table, err))
	}
	if empty {
		return emptyIterator()
	}
	in.ConsistentRead = s.consistentRead()
	if q.Eventual {
		in.ConsistentRead = aws.Bool(false)
	}
	in.ReturnConsumedCapacity = returnCapacity
	return newIterator(ctx, s, q.Limit, q.Filter != nil, func(ctx context.Context, budget int) (page, error) {
		if budget > 0 {
			in.Limit = aws.Int32(int32(min(budget, math.MaxInt32)))
		}
		out, err := s.client.Query(ctx, in, s.callOpts...)
		if err != nil {
			return page{}, fmt.Errorf("query table %q: %w", q.Table, mapError(opOther, err))
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		return page{items: out.Items, more: len(out.LastEvaluatedKey) > 0, examined: int(out.ScannedCount), lastSK: lastSortKey(out.LastEvaluatedKey)}, nil
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
	if q.Filter != nil {
		if err := q.ValidateFilter(); err != nil {
			return nil, false, err
		}
		f, err := filterCondition(*q.Filter)
		if err != nil {
			return nil, false, err
		}
		b = b.WithFilter(f)
	}
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
		FilterExpression:          expr.Filter(),
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

// filterCondition builds the FilterExpression of f: names and values are
// placeholders, as the expression package makes them.
func filterCondition(f storage.Filter) (expression.ConditionBuilder, error) {
	switch f.Op {
	case storage.FilterAnd, storage.FilterOr:
		conds := make([]expression.ConditionBuilder, len(f.Args))
		for i, a := range f.Args {
			c, err := filterCondition(a)
			if err != nil {
				return expression.ConditionBuilder{}, err
			}
			conds[i] = c
		}
		if f.Op == storage.FilterAnd {
			return expression.And(conds[0], conds[1], conds[2:]...), nil
		}
		return expression.Or(conds[0], conds[1], conds[2:]...), nil
	case storage.FilterNot:
		c, err := filterCondition(f.Args[0])
		if err != nil {
			return expression.ConditionBuilder{}, err
		}
		return expression.Not(c), nil
	}
	name := expression.NameNoDotSplit(f.Attr)
	if f.Op == storage.FilterExists {
		return expression.AttributeExists(name), nil
	}
	av, err := toAttributeValue(f.Value)
	if err != nil {
		return expression.ConditionBuilder{}, err
	}
	v := expression.Value(av)
	if f.Op == storage.FilterContains {
		return name.Contains(av), nil
	}
	if f.Size {
		return sizeCondition(name.Size(), f.Op, v)
	}
	switch f.Op {
	case storage.FilterEq:
		return name.Equal(v), nil
	case storage.FilterNe:
		return name.NotEqual(v), nil
	case storage.FilterLt:
		return name.LessThan(v), nil
	case storage.FilterLe:
		return name.LessThanEqual(v), nil
	case storage.FilterGt:
		return name.GreaterThan(v), nil
	case storage.FilterGe:
		return name.GreaterThanEqual(v), nil
	case storage.FilterBeginsWith:
		return name.BeginsWith(f.Value.(string)), nil
	}
	return expression.ConditionBuilder{}, fmt.Errorf("%w: %s", storage.ErrBadFilter, f.Op)
}

// sizeCondition compares the size of an attribute to v.
func sizeCondition(size expression.OperandBuilder, op storage.FilterOp, v expression.ValueBuilder) (expression.ConditionBuilder, error) {
	switch op {
	case storage.FilterEq:
		return expression.Equal(size, v), nil
	case storage.FilterNe:
		return expression.NotEqual(size, v), nil
	case storage.FilterLt:
		return expression.LessThan(size, v), nil
	case storage.FilterLe:
		return expression.LessThanEqual(size, v), nil
	case storage.FilterGt:
		return expression.GreaterThan(size, v), nil
	case storage.FilterGe:
		return expression.GreaterThanEqual(size, v), nil
	}
	return expression.ConditionBuilder{}, fmt.Errorf("%w: size with %s", storage.ErrBadFilter, op)
}
