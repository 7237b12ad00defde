package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/timetabledb/timetable/storage"
)

// UpdateTable changes the table's billing mode and capacity, adds tags,
// and enables TTL on an attribute (UpdateTimeToLive, only when TTL is not
// on that attribute already; an endpoint without TTL records the attribute
// in a tag, as CreateTable does). It reads the table first and sends only what changes, since
// DynamoDB refuses an update that changes nothing, so running it twice is
// harmless. After a capacity change it waits for the table to be ACTIVE
// again. DynamoDB's refusals for now (a table busy with another change,
// the limit on capacity decreases per day) return an error wrapping
// storage.ErrRefused, at once and without retries.
func (s *Store) UpdateTable(ctx context.Context, name string, u storage.TableUpdate) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()

	out, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, s.callOpts...)
	if err != nil {
		return fmt.Errorf("update table %q: %w", name, mapError(opOther, err))
	}
	current := tableInfo(out.Table).Capacity
	if u.Capacity != nil {
		billing, throughput := capacityInput(*u.Capacity)
		want := storage.Capacity{Billing: storage.Billing(billing)}
		if throughput != nil {
			want.Read, want.Write = *throughput.ReadCapacityUnits, *throughput.WriteCapacityUnits
		}
		if want != current {
			in := &dynamodb.UpdateTableInput{TableName: aws.String(name), ProvisionedThroughput: throughput}
			if want.Billing != current.Billing {
				in.BillingMode = billing
			}
			if _, err := s.client.UpdateTable(ctx, in, s.callOpts...); err != nil {
				return fmt.Errorf("update table %q: %w", name, mapError(opChange, err))
			}
			if err := s.waitActive(ctx, name); err != nil {
				return fmt.Errorf("update table %q: %w", name, err)
			}
		}
	}
	if len(u.Tags) > 0 {
		s.labelTable(ctx, name, aws.ToString(out.Table.TableArn), u.Tags)
	}
	if u.TTLAttribute != "" {
		if err := s.enableTTL(ctx, name, u.TTLAttribute, false); err != nil {
			return fmt.Errorf("update table %q: %w", name, err)
		}
	}
	return nil
}
