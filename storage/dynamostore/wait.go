package dynamostore

import (
	"context"
	"errors"
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
		// A table of the name that is not deleting is the next one made
		// under it (a writer's late event after the delete): the table
		// waited for is gone.
		o.Retryable = func(ctx context.Context, in *dynamodb.DescribeTableInput, out *dynamodb.DescribeTableOutput, err error) (bool, error) {
			if err == nil && out != nil && out.Table != nil && out.Table.TableStatus != types.TableStatusDeleting {
				return false, nil
			}
			return tableGoneRetryable(ctx, in, out, err)
		}
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

// tableGoneRetryable is the SDK's rule for TableNotExists: done when
// DescribeTable finds no table, waiting while it finds one, failing on
// another error.
func tableGoneRetryable(_ context.Context, _ *dynamodb.DescribeTableInput, _ *dynamodb.DescribeTableOutput, err error) (bool, error) {
	if err == nil {
		return true, nil
	}
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return false, nil
	}
	return false, err
}
