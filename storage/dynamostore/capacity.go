package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// What DynamoDB calls the parts of a storage.Capacity beyond billing mode
// and units, one place for CreateTable, UpdateTable and DescribeTable.

// onDemandThroughput returns the maximum throughput of an on-demand
// capacity (OnDemandThroughput), nil for none. DynamoDB takes -1 for "no
// maximum" on one side when the other is set.
func onDemandThroughput(c storage.Capacity) *types.OnDemandThroughput {
	if c.Billing != storage.OnDemand || (c.MaxRead == 0 && c.MaxWrite == 0) {
		return nil
	}
	return &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(unbounded(c.MaxRead)), MaxWriteRequestUnits: aws.Int64(unbounded(c.MaxWrite))}
}

func unbounded(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// warmThroughput returns the warm throughput an on-demand capacity asks
// for (WarmThroughput), nil for none.
func warmThroughput(c storage.Capacity) *types.WarmThroughput {
	if c.Billing != storage.OnDemand || (c.WarmRead == 0 && c.WarmWrite == 0) {
		return nil
	}
	w := &types.WarmThroughput{}
	if c.WarmRead != 0 {
		w.ReadUnitsPerSecond = aws.Int64(c.WarmRead)
	}
	if c.WarmWrite != 0 {
		w.WriteUnitsPerSecond = aws.Int64(c.WarmWrite)
	}
	return w
}

// tableClass returns the class to send, "" for the standard class, which
// is DynamoDB's default and need not be named at creation.
func tableClass(c storage.Capacity) types.TableClass {
	if c.Class == storage.ClassInfrequentAccess {
		return types.TableClassStandardInfrequentAccess
	}
	return ""
}

// describedLimits fills in what a table's description says of its class,
// on-demand maximum and warm throughput. A table DynamoDB describes
// without a TableClassSummary is of the standard class (as DynamoDB
// Local's and dynalite's always are: they ignore the class).
func describedLimits(info *storage.TableInfo, t *types.TableDescription) {
	c := &info.Capacity
	c.Class = storage.ClassStandard
	if t.TableClassSummary != nil && t.TableClassSummary.TableClass != "" {
		c.Class = storage.Class(t.TableClassSummary.TableClass)
	}
	if c.Billing == storage.OnDemand {
		if m := t.OnDemandThroughput; m != nil {
			c.MaxRead, c.MaxWrite = max(aws.ToInt64(m.MaxReadRequestUnits), 0), max(aws.ToInt64(m.MaxWriteRequestUnits), 0)
		}
		if w := t.WarmThroughput; w != nil && warmAsked(w) {
			c.WarmRead, c.WarmWrite = aws.ToInt64(w.ReadUnitsPerSecond), aws.ToInt64(w.WriteUnitsPerSecond)
		}
	}
	info.DeletionProtection = aws.ToBool(t.DeletionProtectionEnabled)
}

// warmAsked reports whether a warm throughput is one a caller set rather
// than the 4,000 writes and 12,000 reads a second every new on-demand
// table starts with ("Understanding DynamoDB warm throughput"), which is
// what DynamoDB describes for a table nobody prepared.
func warmAsked(w *types.TableWarmThroughputDescription) bool {
	return aws.ToInt64(w.ReadUnitsPerSecond) > DefaultWarmRead || aws.ToInt64(w.WriteUnitsPerSecond) > DefaultWarmWrite
}

// The warm throughput of a new on-demand table.
const (
	DefaultWarmRead  = 12000
	DefaultWarmWrite = 4000
)

// setPITR turns point-in-time recovery on with a recovery period of days,
// or off for 0, unless it is so already. An endpoint without continuous
// backups (DynamoDB Local, dynalite) answers UnknownOperationException:
// the setting is then dropped, and logged, as there is nothing to back up
// with.
func (s *Store) setPITR(ctx context.Context, name string, days int) error {
	out, err := s.client.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(name)}, s.callOpts...)
	if isUnknownOperation(err) {
		s.log.Debug("dynamodb: endpoint has no point-in-time recovery", "table", name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("describe continuous backups: %w", mapError(opOther, err))
	}
	on, period := false, 0
	if d := out.ContinuousBackupsDescription; d != nil && d.PointInTimeRecoveryDescription != nil {
		p := d.PointInTimeRecoveryDescription
		on = p.PointInTimeRecoveryStatus == types.PointInTimeRecoveryStatusEnabled
		period = int(aws.ToInt32(p.RecoveryPeriodInDays))
	}
	if on == (days > 0) && (!on || period == days) {
		return nil
	}
	spec := &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(days > 0)}
	if days > 0 {
		spec.RecoveryPeriodInDays = aws.Int32(int32(days))
	}
	_, err = s.client.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String(name), PointInTimeRecoverySpecification: spec}, s.callOpts...)
	if isUnknownOperation(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update continuous backups: %w", mapError(opChange, err))
	}
	return nil
}
