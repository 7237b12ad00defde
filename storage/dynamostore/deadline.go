package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/timetabledb/timetable/storage"
)

// controlOperations are DynamoDB's control-plane operations, which
// Options.ControlTimeout bounds: those of tables, their settings, tags,
// backups, exports and imports. The waiters' DescribeTable, DescribeExport
// and DescribeImport calls are among them, each bounded on its own, the
// wait by WaitTimeout (or the export's limit).
var controlOperations = map[string]bool{
	"CreateTable": true, "DeleteTable": true, "UpdateTable": true, "DescribeTable": true, "ListTables": true,
	"UpdateTimeToLive": true, "DescribeTimeToLive": true,
	"TagResource": true, "UntagResource": true, "ListTagsOfResource": true,
	"UpdateContinuousBackups": true, "DescribeContinuousBackups": true,
	"ExportTableToPointInTime": true, "DescribeExport": true, "ImportTable": true, "DescribeImport": true,
}

// controlDeadline returns the client option that bounds every call of a
// control-plane operation, its retries included, by d: a call that the
// endpoint never answers (a DeleteTable left hanging) fails after d with
// an error naming the operation and wrapping storage.ErrUnavailable, so
// that no caller waits without end, whatever its own context says.
func controlDeadline(d time.Duration) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			op := st.ID()
			if !controlOperations[op] {
				return nil
			}
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("timetableControlDeadline",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					cctx, cancel := context.WithTimeout(ctx, d)
					defer cancel()
					out, md, err := next.HandleInitialize(cctx, in)
					if err != nil && ctx.Err() == nil && cctx.Err() != nil {
						err = fmt.Errorf("%w: %s not answered within %v (Options.ControlTimeout): %w", storage.ErrUnavailable, op, d, err)
					}
					return out, md, err
				}), middleware.Before)
		})
	}
}

// controlCall runs fn, a call of Application Auto Scaling's control
// plane named op, under Options.ControlTimeout, as controlDeadline bounds
// DynamoDB's.
func (s *Store) controlCall(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, s.opts.ControlTimeout)
	defer cancel()
	err := fn(cctx)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		err = fmt.Errorf("%w: %s not answered within %v (Options.ControlTimeout): %w", storage.ErrUnavailable, op, s.opts.ControlTimeout, err)
	}
	return err
}
