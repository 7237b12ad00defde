package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
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
//
// DynamoDB keeps one TTL attribute per table, and changes it only from
// DISABLED: TTL already on another attribute, or still being disabled
// (DISABLING takes up to an hour), is storage.ErrRefused with what to do,
// a deferral, rather than a call DynamoDB would refuse every cycle.
func (s *Store) enableTTL(ctx context.Context, name, attr string, onlyIfOff bool) error {
	current, status, err := s.ttlState(ctx, name)
	if err != nil {
		return err
	}
	if current == attr || (onlyIfOff && current != "") {
		return nil
	}
	switch {
	case current != "":
		return fmt.Errorf("enable TTL on table %q: %w: TTL is %s on attribute %q, and DynamoDB keeps one TTL attribute per table: "+
			"disable it (aws dynamodb update-time-to-live --table-name %s --time-to-live-specification Enabled=false,AttributeName=%s) "+
			"and a later cycle enables it on %q", name, storage.ErrRefused, status, current, name, current, attr)
	case status == types.TimeToLiveStatusDisabling:
		return fmt.Errorf("enable TTL on table %q: %w: TTL is still being disabled (DISABLING, up to an hour); a later cycle enables it on %q",
			name, storage.ErrRefused, attr)
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
	attr, _, err := s.ttlState(ctx, name)
	return attr, err
}

// ttlState returns the table's TTL status, and the attribute when TTL is
// enabled or being enabled ("" otherwise).
func (s *Store) ttlState(ctx context.Context, name string) (string, types.TimeToLiveStatus, error) {
	out, err := s.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)}, s.callOpts...)
	if isUnknownOperation(err) {
		return "", types.TimeToLiveStatusDisabled, nil
	}
	if err != nil {
		return "", "", fmt.Errorf("describe TTL of table %q: %w", name, mapError(opOther, err))
	}
	d := out.TimeToLiveDescription
	if d == nil {
		return "", types.TimeToLiveStatusDisabled, nil
	}
	switch d.TimeToLiveStatus {
	case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
		return aws.ToString(d.AttributeName), d.TimeToLiveStatus, nil
	}
	return "", d.TimeToLiveStatus, nil
}

// warnNoTTL logs, once per Store, that the endpoint cannot expire items.
func (s *Store) warnNoTTL(table string, err error) {
	s.ttlWarning.Do(func() {
		s.log.Warn("dynamodb endpoint does not support TTL; items will not expire",
			"table", table, "err", err)
	})
}
