package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// UpdateTable changes the table's billing mode, capacity and on-demand
// maximum (one UpdateTable), its class (another, as DynamoDB changes a
// class on its own), its warm throughput (another; DynamoDB only raises
// it, so a lower one is left as it is), and its deletion protection; adds
// tags; enables TTL on an attribute (UpdateTimeToLive, only when TTL is
// not on that attribute already; an endpoint without TTL records the
// attribute in a tag, as CreateTable does); and sets point-in-time
// recovery (UpdateContinuousBackups). It reads the table first and sends
// only what changes, since DynamoDB refuses an update that changes
// nothing, so running it twice is harmless. After a change it waits for
// the table to be ACTIVE again (and warm, after a warm throughput
// change). DynamoDB's refusals for now (a table busy with another change;
// its limits on switches to on demand, capacity decreases and class
// changes, LimitExceededException) return an error wrapping
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
	info := tableInfo(out.Table)
	if u.Capacity != nil {
		if err := s.updateCapacity(ctx, name, info.Capacity, u.Capacity.Normal()); err != nil {
			return fmt.Errorf("update table %q: %w", name, err)
		}
	}
	if p := u.DeletionProtection; p != nil && *p != info.DeletionProtection {
		in := &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(*p)}
		if err := s.sendUpdate(ctx, in, s.waitActive); err != nil {
			return fmt.Errorf("update table %q: deletion protection: %w", name, err)
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
	if u.PITRDays != nil {
		if err := s.setPITR(ctx, name, *u.PITRDays); err != nil {
			return fmt.Errorf("update table %q: %w", name, err)
		}
	}
	return nil
}

// updateCapacity brings the table from capacity cur, as described, to
// want, in as few UpdateTable requests as DynamoDB takes.
func (s *Store) updateCapacity(ctx context.Context, name string, cur, want storage.Capacity) error {
	billing, throughput := capacityInput(want)
	in := &dynamodb.UpdateTableInput{TableName: aws.String(name)}
	changed := false
	if want.Billing != cur.Billing {
		in.BillingMode, changed = billing, true
	}
	// An auto scaled table's units are auto scaling's to move between
	// the floor and the peak: they are set only on a switch of billing.
	if want.Billing == storage.Provisioned && (changed || (!autoScaled(want) && (want.Read != cur.Read || want.Write != cur.Write))) {
		in.ProvisionedThroughput, changed = throughput, true
	}
	if want.Billing == storage.OnDemand && (want.MaxRead != cur.MaxRead || want.MaxWrite != cur.MaxWrite) {
		in.OnDemandThroughput = onDemandThroughput(want)
		if in.OnDemandThroughput == nil {
			// -1 lifts a maximum.
			in.OnDemandThroughput = &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(-1), MaxWriteRequestUnits: aws.Int64(-1)}
		}
		changed = true
	}
	if changed {
		if err := s.sendUpdate(ctx, in, s.waitActive); err != nil {
			return err
		}
	}
	if autoScaled(want) {
		if err := s.scale(ctx, name, want); err != nil {
			return err
		}
	} else if cur.Billing == storage.Provisioned {
		if err := s.unscale(ctx, name); err != nil {
			return err
		}
	}
	if want.Class != cur.Class {
		in := &dynamodb.UpdateTableInput{TableName: aws.String(name), TableClass: types.TableClass(want.Class)}
		if err := s.sendUpdate(ctx, in, s.waitActive); err != nil {
			return fmt.Errorf("class: %w", err)
		}
	}
	if want.Billing == storage.OnDemand && (want.WarmRead > cur.WarmRead || want.WarmWrite > cur.WarmWrite) {
		in := &dynamodb.UpdateTableInput{TableName: aws.String(name), WarmThroughput: warmThroughput(want)}
		if err := s.sendUpdate(ctx, in, s.waitWarm); err != nil {
			return fmt.Errorf("warm throughput: %w", err)
		}
	}
	return nil
}

// sendUpdate sends one UpdateTable and waits as told.
func (s *Store) sendUpdate(ctx context.Context, in *dynamodb.UpdateTableInput, wait func(context.Context, string) error) error {
	if _, err := s.client.UpdateTable(ctx, in, s.callOpts...); err != nil {
		return mapError(opChange, err)
	}
	return wait(ctx, aws.ToString(in.TableName))
}
