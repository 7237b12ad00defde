package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// listTablesPageSize is the most names DynamoDB returns per ListTables page.
const listTablesPageSize = 100

// minTableNameLen is the shortest table name DynamoDB allows, and so the
// shortest ExclusiveStartTableName it takes.
const minTableNameLen = 3

// ListTables calls fn with the name of every table sorting after after, in
// ascending order, until fn returns false. It fetches pages of 100 names
// with the SDK paginator, starting at after with ExclusiveStartTableName,
// and requests no page past the one where fn returned false.
//
// DynamoDB refuses an ExclusiveStartTableName shorter than a table name
// can be (3 characters): for a shorter after, such as a family prefix of
// one or two characters, the listing starts at the first table and skips
// the names that do not sort after it.
func (s *Store) ListTables(ctx context.Context, after string, fn func(name string) bool) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()

	in := &dynamodb.ListTablesInput{Limit: aws.Int32(listTablesPageSize)}
	if len(after) >= minTableNameLen {
		in.ExclusiveStartTableName = aws.String(after)
	}
	pages := dynamodb.NewListTablesPaginator(s.client, in)
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return fmt.Errorf("list tables after %q: %w", after, mapError(opOther, err))
		}
		for _, name := range out.TableNames {
			if name <= after {
				continue
			}
			if !fn(name) {
				return nil
			}
		}
	}
	return nil
}
