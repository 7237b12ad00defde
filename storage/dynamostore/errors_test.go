package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
		{"ResourceNotFoundException", opOther, storage.ErrTableNotFound},
		{"ResourceNotFoundException", opChange, storage.ErrTableNotFound},
		{"ResourceInUseException", opCreate, storage.ErrTableExists},
		{"ResourceInUseException", opChange, storage.ErrRefused},
		{"ResourceInUseException", opOther, nil},
		{"LimitExceededException", opChange, storage.ErrRefused},
		{"ProvisionedThroughputExceededException", opOther, storage.ErrThrottled},
		{"ThrottlingException", opOther, storage.ErrThrottled},
		{"RequestLimitExceeded", opOther, storage.ErrThrottled},
		{"ValidationException", opOther, nil},
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
	require.NoError(t, mapError(opOther, nil))
	require.Equal(t, context.Canceled, mapError(opOther, context.Canceled))

	// A ValidationException is storage.ErrInvalid, labelled as what was
	// refused: an item, or a request on a table.
	for o, label := range map[op]string{opOther: "invalid item", opCreate: "invalid table request", opChange: "invalid table request"} {
		err := mapError(o, apiErr(codeValidation))
		require.ErrorIs(t, err, storage.ErrInvalid)
		require.True(t, strings.HasPrefix(err.Error(), "timetable: "+label+": "), err.Error())
	}

	// Throttled until the deadline (retryBudget.call): throttled, and
	// the deadline still in the chain.
	late := fmt.Errorf("throttled until the context ended: %w: %w", apiErr(codeThrottling), &aws.RequestCanceledError{Err: context.DeadlineExceeded})
	err := mapError(opOther, late)
	require.ErrorIs(t, err, storage.ErrThrottled)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestRefusalsNotRetried(t *testing.T) {
	r := newRetryer(backoff{base: 1, max: 1})
	require.False(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "LimitExceededException"}))
	require.False(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ResourceInUseException"}))
	require.True(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}))
	require.True(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ThrottlingException"}))
	require.True(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "RequestLimitExceeded"}))
	// A call's retryBudget ends its retries, not the retryer.
	require.Zero(t, r.MaxAttempts())
	require.False(t, r.IsErrorRetryable(&retry.MaxAttemptsError{Attempt: 10, Err: &smithy.GenericAPIError{Code: "ThrottlingException"}}),
		"an error the budget marked as the last")
	var _ aws.Retryer = r
}

// TestUnavailable checks what an endpoint that cannot serve makes of the
// store's calls: storage.ErrUnavailable when nothing listens or when it
// answers 5xx, after the retries; not when the caller gave up, nor for
// an answer that says the request is wrong.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	fast := func(o Options) Options {
		o.MaxAttempts, o.RetryBaseDelay, o.MaxBackoff = 2, time.Millisecond, time.Millisecond
		return o
	}
	closed, err := Open(ctx, fast(Options{ClientOptions: []func(*dynamodb.Options){noServer, dummyCredentials}}))
	require.NoError(t, err)
	defer closed.Close()

	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := int(status.Load())
		body := ""
		switch code {
		case http.StatusInternalServerError:
			body = `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error"}`
		case http.StatusBadRequest:
			body = `{"__type":"com.amazon.coral.validate#ValidationException","message":"bad"}`
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 10))
		w.WriteHeader(code)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	failing, err := Open(ctx, fast(Options{ClientOptions: []func(*dynamodb.Options){noServer, dummyCredentials, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
	}}}))
	require.NoError(t, err)
	defer failing.Close()

	calls := func(s *Store) map[string]error {
		_, getErr := s.GetItem(ctx, "t", "pk", "sk")
		return map[string]error{
			"GetItem":    getErr,
			"BatchWrite": s.BatchWrite(ctx, "t", faultItems(3)),
			"Update":     s.Update(ctx, storage.Update{Table: "t", PK: "pk", SK: "sk"}),
			"Query":      drainErr(s.Query(ctx, storage.Query{Table: "t", PK: "pk"})),
			"Scan":       drainErr(s.Scan(ctx, "t")),
			"Describe": func() error {
				_, err := s.DescribeTable(ctx, "t")
				return err
			}(),
		}
	}
	for name, err := range calls(closed) {
		require.ErrorIs(t, err, storage.ErrUnavailable, "%s on a closed port", name)
	}
	for _, code := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusBadGateway} {
		status.Store(int32(code))
		for name, err := range calls(failing) {
			require.ErrorIs(t, err, storage.ErrUnavailable, "%s answered %d", name, code)
		}
	}
	status.Store(http.StatusBadRequest)
	for name, err := range calls(failing) {
		require.Error(t, err, name)
		require.NotErrorIs(t, err, storage.ErrUnavailable, "%s answered ValidationException", name)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = closed.GetItem(canceled, "t", "pk", "sk")
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, storage.ErrUnavailable, "the caller gave up")

	// A Client given with the SDK's retry quota may run out of it.
	quota := errors.Join(errors.New("attempt failed"), ratelimit.QuotaExceededError{})
	require.ErrorIs(t, mapError(opOther, quota), storage.ErrThrottled)
}

// dummyCredentials spares the client the credential chain.
func dummyCredentials(o *dynamodb.Options) {
	o.Credentials = credentials.NewStaticCredentialsProvider("x", "x", "")
}

// drainErr reads an iterator to its end and returns its error.
func drainErr(it storage.Iterator) error {
	defer it.Close()
	for it.Next() {
	}
	return it.Err()
}

// A CreateTable that meets the account's table quota is told from one
// that meets the limit on table operations at once: only the first is
// ErrTableQuota, which waiting does not cure.
func TestTableQuota(t *testing.T) {
	limit := func(msg string) error { return &smithy.GenericAPIError{Code: "LimitExceededException", Message: msg} }
	quota := limit("Subscriber limit exceeded: There is a limit of 2500 tables per subscriber")
	busy := limit("Subscriber limit exceeded: Only 500 tables can be created, updated, or deleted simultaneously")
	require.ErrorIs(t, mapError(opCreate, quota), storage.ErrTableQuota)
	require.NotErrorIs(t, mapError(opCreate, quota), storage.ErrRefused)
	require.ErrorIs(t, mapError(opCreate, busy), storage.ErrRefused)
	require.NotErrorIs(t, mapError(opCreate, busy), storage.ErrTableQuota)
	require.ErrorIs(t, mapError(opChange, quota), storage.ErrRefused, "only CreateTable meets the table quota")
}
