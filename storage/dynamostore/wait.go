package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
