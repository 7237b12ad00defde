package dynamostore

import (
	"context"
	"errors"
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
// storage.ErrRefused, at once and without retries. On an endpoint that
// ignores table classes (updateClass) the rest of the update is applied
// and the error returned wraps storage.ErrUnsupported: the class alone
// was not changed.
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
	var classErr error // the class alone not changed: the rest goes on
	if u.Capacity != nil {
		if err := s.updateCapacity(ctx, name, info.Capacity, u.Capacity.Normal()); errors.Is(err, storage.ErrUnsupported) {
			classErr = fmt.Errorf("update table %q: %w", name, err)
		} else if err != nil {
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
	return classErr
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
	var classErr error
	if want.Class != cur.Class {
		classErr = s.updateClass(ctx, name, want.Class)
		if classErr != nil && !errors.Is(classErr, storage.ErrUnsupported) {
			return classErr
		}
	}
	if want.Billing == storage.OnDemand && (want.WarmRead > cur.WarmRead || want.WarmWrite > cur.WarmWrite) {
		in := &dynamodb.UpdateTableInput{TableName: aws.String(name), WarmThroughput: warmThroughput(want)}
		if err := s.sendUpdate(ctx, in, s.waitWarm); err != nil {
			return fmt.Errorf("warm throughput: %w", err)
		}
	}
	return classErr
}

// updateClass changes the table's class with an UpdateTable of its own.
// An endpoint that ignores table classes (DynamoDB Local, dynalite) shows
// it by refusing the update with a ValidationException, as one that
// changes nothing (DynamoDB Local's "Nothing to update"), or by taking it
// and describing the table without the class: the class change returns
// an error wrapping storage.ErrUnsupported, and, as the endpoint will not
// learn classes, is not sent again.
func (s *Store) updateClass(ctx context.Context, name string, class storage.Class) error {
	unsupported := func() error {
		return fmt.Errorf("class %s: the endpoint ignores table classes: %w", class, storage.ErrUnsupported)
	}
	if s.noClass.Load() {
		return unsupported()
	}
	in := &dynamodb.UpdateTableInput{TableName: aws.String(name), TableClass: types.TableClass(class)}
	err := s.sendUpdate(ctx, in, s.waitActive)
	ignored := errorCode(err) == codeValidation
	if err == nil {
		out, derr := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, s.callOpts...)
		if derr != nil {
			return fmt.Errorf("class: %w", mapError(opOther, derr))
		}
		ignored = tableInfo(out.Table).Capacity.Class != class
	}
	if !ignored {
		if err != nil {
			return fmt.Errorf("class: %w", err)
		}
		return nil
	}
	if !s.noClass.Swap(true) {
		s.log.Info("dynamodb endpoint ignores table classes: tables keep the standard class", "table", name, "err", err)
	}
	return unsupported()
}

// sendUpdate sends one UpdateTable and waits as told.
func (s *Store) sendUpdate(ctx context.Context, in *dynamodb.UpdateTableInput, wait func(context.Context, string) error) error {
	if _, err := s.client.UpdateTable(ctx, in, s.callOpts...); err != nil {
		return mapError(opChange, err)
	}
	return wait(ctx, aws.ToString(in.TableName))
}
