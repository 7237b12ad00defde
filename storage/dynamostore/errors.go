package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/timetabledb/timetable/storage"
)

// This file is the only place that looks at AWS error codes. Everything
// else asks it what an error means.

// AWS error codes this package acts on.
const (
	codeResourceNotFound     = "ResourceNotFoundException"
	codeResourceInUse        = "ResourceInUseException"
	codeLimitExceeded        = "LimitExceededException"
	codeThroughputExceeded   = "ProvisionedThroughputExceededException"
	codeThrottling           = "ThrottlingException"
	codeRequestLimitExceeded = "RequestLimitExceeded"
	codeUnknownOperation     = "UnknownOperationException"
	codeAccessDenied         = "AccessDeniedException"
	codeConditionFailed      = "ConditionalCheckFailedException"
	codeValidation           = "ValidationException"
)

// Messages of the ValidationExceptions that UpdateItem answers and that
// mapUpdateError gives a meaning. DynamoDB has no more specific code for
// them; DynamoDB and dynalite word them the same.
const (
	// msgInvalidPath answers an update of a path whose parent is missing
	// or of another type: SET m.k when the item has no map m.
	msgInvalidPath = "The document path provided in the update expression is invalid for update"
	// msgTooLarge ends "Item size to update has exceeded the maximum
	// allowed size" (UpdateItem) and "Item size has exceeded the maximum
	// allowed size" (PutItem, and values in ExpressionAttributeValues).
	msgTooLarge = "exceeded the maximum allowed size"
	// msgHashKeyTooLarge and msgRangeKeyTooLarge answer key values over
	// 2048 and 1024 bytes.
	msgHashKeyTooLarge  = "Size of hashkey has exceeded"
	msgRangeKeyTooLarge = "range keys has exceeded the size limit"
)

// errorCode returns the AWS error code of err, or "" when err did not come
// from the service.
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// op says what a failed call was doing; it picks the sentinel that codes
// shared by several operations map to.
type op int

const (
	opOther  op = iota // every other call: items, DescribeTable, ListTables, tags, TTL
	opCreate           // CreateTable
	opChange           // UpdateTable, TagResource, DeleteTable
)

// mapError wraps err, as returned by the SDK, with the storage sentinel its
// AWS error code stands for, if any, keeping err in the chain. An endpoint
// that could not be reached, or that answered with a 5xx, is
// storage.ErrUnavailable; a retry quota of the client's retryer that ran
// out is storage.ErrThrottled; a ValidationException, a request DynamoDB
// will refuse however often it comes, is storage.ErrInvalid (the store
// validates what it sends, so this is DynamoDB refusing what its emulator
// took, or a limit storage does not know), labelled an invalid table
// request, not an invalid item, on CreateTable, UpdateTable, TagResource
// and DeleteTable. A call that DynamoDB throttled
// until its context ended is storage.ErrThrottled, the context's error
// still in the chain; other ctx errors, and errors without a code, come
// back unchanged.
func mapError(o op, err error) error {
	if err == nil {
		return nil
	}
	if (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && !isThrottle(err) {
		return err
	}
	var sentinel error
	switch {
	case isUnreachable(err), isServerError(err):
		sentinel = storage.ErrUnavailable
	case isQuotaExceeded(err):
		sentinel = storage.ErrThrottled
	}
	switch errorCode(err) {
	case codeResourceNotFound:
		sentinel = storage.ErrTableNotFound
	case codeResourceInUse:
		switch o {
		case opCreate:
			sentinel = storage.ErrTableExists
		case opChange:
			sentinel = storage.ErrRefused
		}
	case codeLimitExceeded:
		sentinel = storage.ErrRefused
		if o == opCreate && isTableQuota(err) {
			sentinel = storage.ErrTableQuota
		}
	case codeThroughputExceeded, codeThrottling, codeRequestLimitExceeded:
		sentinel = storage.ErrThrottled
	case codeValidation:
		sentinel = storage.ErrInvalid
		if o == opCreate || o == opChange {
			sentinel = errInvalidTableRequest
		}
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

// errInvalidTableRequest is storage.ErrInvalid as a call on a table, not
// on its items, meets it: the request to create or change the table is
// what DynamoDB refuses, and the error says so.
var errInvalidTableRequest error = invalidTableRequest{}

type invalidTableRequest struct{}

func (invalidTableRequest) Error() string { return "timetable: invalid table request" }

// Is makes the error storage.ErrInvalid.
func (invalidTableRequest) Is(target error) bool { return target == storage.ErrInvalid }

// mapUpdateError is mapError for UpdateItem, which answers two more
// storage sentinels:
//
//   - ConditionalCheckFailedException is storage.ErrConditionFailed;
//   - a ValidationException saying the document path is invalid for
//     update is storage.ErrConditionFailed too: it means a SetKey found no
//     map to set a key in, which is a condition on the item's state that
//     the update did not guard (storage.ActionSetKey says so), not a
//     malformed request, and the item is unchanged;
//   - a ValidationException saying the item, or a key, exceeded the
//     maximum size is storage.ErrItemTooLarge, and storage.ErrInvalid as
//     every ValidationException.
//
// Every other error goes through mapError.
func mapUpdateError(err error) error {
	var sentinel error
	switch errorCode(err) {
	case codeConditionFailed:
		sentinel = storage.ErrConditionFailed
	case codeValidation:
		msg := errorMessage(err)
		switch {
		case strings.Contains(msg, msgInvalidPath):
			sentinel = storage.ErrConditionFailed
		case strings.Contains(msg, msgTooLarge),
			strings.Contains(msg, msgHashKeyTooLarge),
			strings.Contains(msg, msgRangeKeyTooLarge):
			return fmt.Errorf("%w: %w: %w", storage.ErrItemTooLarge, storage.ErrInvalid, err)
		}
	}
	if sentinel == nil {
		return mapError(opOther, err)
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

// isUnreachable reports whether a request could not be sent or its answer
// not read: a connection refused, reset or timed out, a name that did not
// resolve. The SDK cancels with ctx errors of their own.
func isUnreachable(err error) bool {
	var send *smithyhttp.RequestSendError
	return errors.As(err, &send)
}

// isServerError reports whether the endpoint answered with a 5xx: an
// InternalServerError or ServiceUnavailable of DynamoDB, a proxy's 502 or
// 504.
func isServerError(err error) bool {
	var resp *smithyhttp.ResponseError
	return errors.As(err, &resp) && resp.HTTPStatusCode() >= 500
}

// isQuotaExceeded reports whether the retry quota of the client's retryer
// ran out: a Client given in Options may have one (the store's own retryer
// does not).
func isQuotaExceeded(err error) bool {
	var quota ratelimit.QuotaExceededError
	return errors.As(err, &quota)
}

// errorMessage returns the message of an error from the service, or "".
func errorMessage(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorMessage()
	}
	return ""
}

// isUnknownOperation reports whether the endpoint does not implement the
// operation (dynalite and UpdateTimeToLive).
func isUnknownOperation(err error) bool {
	return errorCode(err) == codeUnknownOperation
}

// isTableQuota reports whether a CreateTable's LimitExceededException is
// about the number of tables the account may have, rather than the number
// of table operations it may run at once: DynamoDB tells the two apart
// only by the message, which for the latter speaks of operations at the
// same time ("simultaneously").
func isTableQuota(err error) bool {
	msg := strings.ToLower(errorMessage(err))
	return strings.Contains(msg, "table") && !strings.Contains(msg, "simultaneous") && !strings.Contains(msg, "concurrent")
}

// isAccessDenied reports whether the caller's role may not make the call.
func isAccessDenied(err error) bool {
	return errorCode(err) == codeAccessDenied
}

// isConditionFailed reports whether a conditional write found its
// condition false.
func isConditionFailed(err error) bool {
	return errorCode(err) == codeConditionFailed
}

// Reasons of a throttle, the label of the throttle metric: DynamoDB's
// ThrottlingReason (ResourceType+OperationType+LimitType, e.g.
// TableWriteKeyRangeThroughputExceeded) reduced to the limit and the
// operation, table and index alike; ReasonUnknown when the error gives
// none (an endpoint before 2025, an emulator) or one not known here.
const (
	ReasonProvisionedRead  = "provisioned_read"
	ReasonProvisionedWrite = "provisioned_write"
	ReasonKeyRangeRead     = "key_range_read"
	ReasonKeyRangeWrite    = "key_range_write"
	ReasonOnDemandMaxRead  = "on_demand_max_read"
	ReasonOnDemandMaxWrite = "on_demand_max_write"
	ReasonAccountRead      = "account_limit_read"
	ReasonAccountWrite     = "account_limit_write"
	ReasonUnknown          = "unknown"
)

// throttleReasons returns the reasons of a throttling error, as the
// metric labels them: one per ThrottlingReason, ReasonUnknown when there
// is none.
func throttleReasons(err error) []string {
	var rs []types.ThrottlingReason
	var pte *types.ProvisionedThroughputExceededException
	var te *types.ThrottlingException
	var rle *types.RequestLimitExceeded
	switch {
	case errors.As(err, &pte):
		rs = pte.ThrottlingReasons
	case errors.As(err, &te):
		rs = te.ThrottlingReasons
	case errors.As(err, &rle):
		rs = rle.ThrottlingReasons
	}
	var out []string
	for _, r := range rs {
		out = append(out, throttleReason(aws.ToString(r.Reason)))
	}
	if len(out) == 0 {
		out = []string{ReasonUnknown}
	}
	return out
}

// throttleReason reduces one of DynamoDB's reasons to a label.
func throttleReason(reason string) string {
	rest, ok := strings.CutPrefix(reason, "Table")
	if !ok {
		if rest, ok = strings.CutPrefix(reason, "Index"); !ok {
			return ReasonUnknown
		}
	}
	var operation string
	switch {
	case strings.HasPrefix(rest, "Read"):
		operation, rest = "read", rest[len("Read"):]
	case strings.HasPrefix(rest, "Write"):
		operation, rest = "write", rest[len("Write"):]
	default:
		return ReasonUnknown
	}
	switch rest {
	case "ProvisionedThroughputExceeded":
		return "provisioned_" + operation
	case "KeyRangeThroughputExceeded":
		return "key_range_" + operation
	case "MaxOnDemandThroughputExceeded":
		return "on_demand_max_" + operation
	case "AccountLimitExceeded":
		return "account_limit_" + operation
	}
	return ReasonUnknown
}

// isThrottle reports whether DynamoDB answered with a throttling error:
// the table's or the account's throughput, or the request rate.
func isThrottle(err error) bool {
	switch errorCode(err) {
	case codeThroughputExceeded, codeThrottling, codeRequestLimitExceeded:
		return true
	}
	return false
}

// isResourceInUse reports whether a table is busy being created, updated
// or deleted, or already exists.
func isResourceInUse(err error) bool {
	return errorCode(err) == codeResourceInUse
}

// isProtected reports whether DeleteTable was refused for the table's
// deletion protection: a ValidationException whose message says so
// ("Using deletion protection" in the Developer Guide).
func isProtected(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == codeValidation &&
		strings.Contains(strings.ToLower(apiErr.ErrorMessage()), "deletion protection")
}

// isNotFound reports whether the table does not exist.
func isNotFound(err error) bool {
	return errorCode(err) == codeResourceNotFound
}

// refusalsNotRetried keeps the SDK's retryer from retrying control-plane
// refusals: the SDK counts LimitExceededException as throttling and would
// retry it for a minute, while DynamoDB's limits last hours or days: four
// switches to on demand in any 24 hours; four capacity decreases a UTC
// day, then one more each hour, up to 27 a day (Developer Guide,
// "Service, account, and table quotas"); two class changes in 30 days.
// The lifecycle manager retries on its next cycle instead.
var refusalsNotRetried = retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
	switch errorCode(err) {
	case codeLimitExceeded, codeResourceInUse:
		return aws.FalseTernary
	}
	return aws.UnknownTernary
})
