package dynamostore

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

func TestMapError(t *testing.T) {
	apiErr := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: "m"} }
	for _, tc := range []struct {
		code string
		op   op
		want error
	}{
		{"ResourceNotFoundException", opRead, storage.ErrTableNotFound},
		{"ResourceNotFoundException", opChange, storage.ErrTableNotFound},
		{"ResourceInUseException", opCreate, storage.ErrTableExists},
		{"ResourceInUseException", opChange, storage.ErrRefused},
		{"ResourceInUseException", opRead, nil},
		{"LimitExceededException", opChange, storage.ErrRefused},
		{"ProvisionedThroughputExceededException", opRead, storage.ErrThrottled},
		{"ThrottlingException", opRead, storage.ErrThrottled},
		{"RequestLimitExceeded", opRead, storage.ErrThrottled},
		{"ValidationException", opRead, nil},
	} {
		t.Run(tc.code, func(t *testing.T) {
			orig := apiErr(tc.code)
			err := mapError(tc.op, orig)
			require.ErrorIs(t, err, orig, "the SDK error stays in the chain")
			for _, s := range []error{storage.ErrTableNotFound, storage.ErrTableExists, storage.ErrRefused, storage.ErrThrottled} {
				require.Equal(t, s == tc.want, errors.Is(err, s), "%v", s)
			}
		})
	}
	require.NoError(t, mapError(opRead, nil))
	require.Equal(t, context.Canceled, mapError(opRead, context.Canceled))
}

func TestRefusalsNotRetried(t *testing.T) {
	r := newRetryer(10, backoff{base: 1, max: 1})
	require.False(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "LimitExceededException"}))
	require.False(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ResourceInUseException"}))
	require.True(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}))
	require.True(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ThrottlingException"}))
	require.Equal(t, 10, r.MaxAttempts())
	var _ aws.Retryer = r
}
