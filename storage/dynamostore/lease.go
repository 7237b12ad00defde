package dynamostore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/storage"
)

// Lease grants named leases to one owner at a time through items of a
// table (timetable's meta table), so that of several servers on one
// DynamoDB account only one runs the lifecycle manager. It implements
// lifecycle.Leaser.
//
// A lease is the item (pk "lease#NAME", sk "lease") with attributes owner
// and expires (Unix milliseconds). Acquire writes it with the condition
// attribute_not_exists(pk) OR expires < :now OR owner = :me, so the write
// succeeds only for the holder or when nobody holds an unexpired lease;
// DynamoDB evaluates the condition and the write atomically. Owners' clocks
// should agree to well within the TTL.
type Lease struct {
	// Store is the DynamoDB store; Table the table holding lease items,
	// which must exist with timetable's key schema.
	Store *Store
	Table string
	// Clock tells the time; the wall clock when nil.
	Clock clock.Clock
}

// Acquire takes or renews the lease name for owner for ttl, and reports
// whether owner holds it.
func (l Lease) Acquire(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	clk := l.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	now := clk.Now()
	free := expression.AttributeNotExists(expression.Name(storage.PKAttr)).
		Or(expression.Name("expires").LessThan(expression.Value(now.UnixMilli()))).
		Or(expression.Name("owner").Equal(expression.Value(owner)))
	ok, err := l.put(ctx, name, owner, now.Add(ttl).UnixMilli(), free)
	if err != nil {
		return false, fmt.Errorf("acquire lease %q in table %q: %w", name, l.Table, err)
	}
	return ok, nil
}

// Release gives the lease name up if owner holds it: it writes the lease
// item expired, on condition that owner holds it, so a lease another owner
// took in the meantime is left alone.
func (l Lease) Release(ctx context.Context, name, owner string) error {
	ours := expression.Name("owner").Equal(expression.Value(owner))
	if _, err := l.put(ctx, name, owner, 0, ours); err != nil {
		return fmt.Errorf("release lease %q in table %q: %w", name, l.Table, err)
	}
	return nil // written, or not ours (any more)
}

// put writes the lease item of name, held by owner until expires (Unix
// milliseconds), on condition cond, and reports whether cond held.
func (l Lease) put(ctx context.Context, name, owner string, expires int64, cond expression.ConditionBuilder) (bool, error) {
	s := l.Store
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.calls.Done()
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return false, err
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(l.Table),
		Item: map[string]types.AttributeValue{
			storage.PKAttr: &types.AttributeValueMemberS{Value: "lease#" + name},
			storage.SKAttr: &types.AttributeValueMemberS{Value: "lease"},
			"owner":        &types.AttributeValueMemberS{Value: owner},
			"expires":      &types.AttributeValueMemberN{Value: strconv.FormatInt(expires, 10)},
		},
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnConsumedCapacity:    returnCapacity,
	}, s.callOpts...)
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, mapError(opOther, err)
	}
	return true, nil
}
