package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// waitActive waits with the SDK waiter until the table is ACTIVE.
func (s *Store) waitActive(ctx context.Context, name string) error {
	w := dynamodb.NewTableExistsWaiter(s.client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = s.opts.WaitMinDelay
		o.MaxDelay = s.opts.WaitMaxDelay
		o.ClientOptions = append(o.ClientOptions, s.callOpts...)
	})
	in := &dynamodb.DescribeTableInput{TableName: &name}
	if err := w.Wait(ctx, in, s.opts.WaitTimeout); err != nil {
		return fmt.Errorf("wait for table %q to be active: %w", name, mapError(opOther, err))
	}
	return nil
}

// waitGone waits with the SDK waiter until the table no longer exists.
func (s *Store) waitGone(ctx context.Context, name string) error {
	w := dynamodb.NewTableNotExistsWaiter(s.client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay = s.opts.WaitMinDelay
		o.MaxDelay = s.opts.WaitMaxDelay
		o.ClientOptions = append(o.ClientOptions, s.callOpts...)
	})
	in := &dynamodb.DescribeTableInput{TableName: &name}
	if err := w.Wait(ctx, in, s.opts.WaitTimeout); err != nil {
		return fmt.Errorf("wait for table %q to be deleted: %w", name, mapError(opOther, err))
	}
	return nil
}

// waitWarm waits with the SDK's TableExists waiter, told to wait on, until
// the table is ACTIVE and its warm throughput is too (DescribeTable's
// WarmThroughput.Status): a table prebuilt for a peak takes its period's
// first writes only once it is warm.
func (s *Store) waitWarm(ctx context.Context, name string) error {
	w := dynamodb.NewTableExistsWaiter(s.client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = s.opts.WaitMinDelay
		o.MaxDelay = s.opts.WaitMaxDelay
		o.ClientOptions = append(o.ClientOptions, s.callOpts...)
		o.Retryable = func(ctx context.Context, in *dynamodb.DescribeTableInput, out *dynamodb.DescribeTableOutput, err error) (bool, error) {
			if err != nil {
				return false, err
			}
			t := out.Table
			if t.TableStatus != types.TableStatusActive {
				return true, nil
			}
			// An endpoint that does not describe warm throughput (DynamoDB
			// Local, dynalite) has nothing to wait for.
			return t.WarmThroughput != nil && t.WarmThroughput.Status != "" && t.WarmThroughput.Status != types.TableStatusActive, nil
		}
	})
	in := &dynamodb.DescribeTableInput{TableName: &name}
	if err := w.Wait(ctx, in, s.opts.WaitTimeout); err != nil {
		return fmt.Errorf("wait for table %q to be warm: %w", name, mapError(opOther, err))
	}
	return nil
}
