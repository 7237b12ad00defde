package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// DescribeTable returns the table's status, creation time, billing and
// capacity, tags, TTL attribute and DynamoDB's estimates of its item count
// and size, its class, on-demand maximum, warm throughput (when more than
// a new table's) and deletion protection. It does not report
// point-in-time recovery (PITRDays is 0), which would cost a fourth
// request. It costs three requests: DescribeTable, ListTagsOfResource
// (paged; none on an endpoint without tagging) and DescribeTimeToLive. On an endpoint without TTL, the TTL
// attribute is the one CreateTable was asked for.
func (s *Store) DescribeTable(ctx context.Context, name string) (storage.TableInfo, error) {
	if err := s.gate.Enter(); err != nil {
		return storage.TableInfo{}, err
	}
	defer s.gate.Exit()

	out, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, s.callOpts...)
	if err != nil {
		return storage.TableInfo{}, fmt.Errorf("describe table %q: %w", name, mapError(opOther, err))
	}
	info := tableInfo(out.Table)
	if info.Tags, err = s.tags(ctx, name, aws.ToString(out.Table.TableArn)); err != nil {
		return storage.TableInfo{}, fmt.Errorf("describe table %q: %w", name, err)
	}
	if info.TTLAttribute, err = s.ttlAttribute(ctx, name); err != nil {
		return storage.TableInfo{}, fmt.Errorf("describe table %q: %w", name, err)
	}
	if recorded, ok := info.Tags[ttlTag]; ok {
		delete(info.Tags, ttlTag)
		if info.TTLAttribute == "" {
			info.TTLAttribute = recorded
		}
	}
	return info, nil
}

// tableInfo converts what DescribeTable says of a table.
func tableInfo(t *types.TableDescription) storage.TableInfo {
	info := storage.TableInfo{
		TableSpec: storage.TableSpec{Name: aws.ToString(t.TableName)},
		Status:    storage.Status(t.TableStatus),
		ItemCount: -1,
		SizeBytes: -1,
	}
	if t.CreationDateTime != nil {
		info.CreatedAt = t.CreationDateTime.UTC()
	}
	if t.ItemCount != nil {
		info.ItemCount = *t.ItemCount
	}
	if t.TableSizeBytes != nil {
		info.SizeBytes = *t.TableSizeBytes
	}
	// DynamoDB leaves BillingModeSummary out for a table that was always
	// provisioned.
	info.Capacity.Billing = storage.Provisioned
	if t.BillingModeSummary != nil && t.BillingModeSummary.BillingMode == types.BillingModePayPerRequest {
		info.Capacity.Billing = storage.OnDemand
	}
	if info.Capacity.Billing == storage.Provisioned && t.ProvisionedThroughput != nil {
		info.Capacity.Read = aws.ToInt64(t.ProvisionedThroughput.ReadCapacityUnits)
		info.Capacity.Write = aws.ToInt64(t.ProvisionedThroughput.WriteCapacityUnits)
	}
	describedLimits(&info, t)
	return info
}
