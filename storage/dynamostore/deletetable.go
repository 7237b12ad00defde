package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// DeleteTable deletes the table and returns once DynamoDB no longer lists
// it, so that a table of the same name can be created at once. A table
// being deleted already is waited for, not reported as an error. Deleting
// a table that does not exist returns an error wrapping
// storage.ErrTableNotFound; a table still being created or updated,
// storage.ErrRefused; a table with deletion protection on,
// storage.ErrProtected (lift it with UpdateTable first).
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()

	_, err := s.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}, s.callOpts...)
	if isResourceInUse(err) {
		out, derr := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, s.callOpts...)
		if derr == nil && out.Table.TableStatus == types.TableStatusDeleting {
			err = nil
		}
	}
	if isProtected(err) {
		return fmt.Errorf("delete table %q: %w: %w", name, storage.ErrProtected, err)
	}
	if err != nil {
		return fmt.Errorf("delete table %q: %w", name, mapError(opChange, err))
	}
	if err := s.waitGone(ctx, name); err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	if err := s.unscale(ctx, name); err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	return nil
}
