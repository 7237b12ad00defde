package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ttlTag is the table tag that records the TTL attribute asked for on an
// endpoint that cannot enable TTL, so that DescribeTable reports what the
// table was created with and a reconciler comparing it converges.
// DescribeTable does not return it among the tags.
const ttlTag = "timetable:ttl-attribute"

// enableTTL enables TTL on the attribute. With onlyIfOff, it leaves alone
// a table with TTL enabled, or being enabled, on any attribute (DynamoDB
// refuses to enable it twice). An endpoint without TTL is reported once per
// Store; the attribute is then recorded in the tag ttlTag, where the
// endpoint has tags.
func (s *Store) enableTTL(ctx context.Context, name, attr string, onlyIfOff bool) error {
	current, err := s.ttlAttribute(ctx, name)
	if err != nil {
		return err
	}
	if current == attr || (onlyIfOff && current != "") {
		return nil
	}
	_, err = s.client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attr),
			Enabled:       aws.Bool(true),
		},
	}, s.callOpts...)
	if isUnknownOperation(err) {
		s.warnNoTTL(name, err)
		s.labelTable(ctx, name, "", map[string]string{ttlTag: attr})
		return nil
	}
	if err != nil {
		return fmt.Errorf("enable TTL on table %q: %w", name, mapError(opChange, err))
	}
	return nil
}

// ttlAttribute returns the attribute TTL is enabled, or being enabled, on;
// "" when TTL is off or the endpoint does not know TTL (dynalite knows
// DescribeTimeToLive and always answers DISABLED).
func (s *Store) ttlAttribute(ctx context.Context, name string) (string, error) {
	out, err := s.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)}, s.callOpts...)
	if isUnknownOperation(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("describe TTL of table %q: %w", name, mapError(opRead, err))
	}
	d := out.TimeToLiveDescription
	if d == nil {
		return "", nil
	}
	switch d.TimeToLiveStatus {
	case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
		return aws.ToString(d.AttributeName), nil
	}
	return "", nil
}

// warnNoTTL logs, once per Store, that the endpoint cannot expire items.
func (s *Store) warnNoTTL(table string, err error) {
	s.ttlWarning.Do(func() {
		s.log.Warn("dynamodb endpoint does not support TTL; items will not expire",
			"table", table, "err", err)
	})
}
