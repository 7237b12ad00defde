package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// backoff is exponential backoff with full jitter: the wait before retry n
// (n from 0) is drawn uniformly from [0, min(max, base * 2^n)).
type backoff struct {
	base, max time.Duration
}

// delay returns the wait before retry n.
func (b backoff) delay(n int) time.Duration {
	ceiling := b.max
	if n < 62 {
		if d := b.base << n; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling)
}

// sleep waits before retry n, or until ctx is done.
func (b backoff) sleep(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(b.delay(n))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryPolicy is how the store's calls are retried: the SDK's standard
// retryer, which makes the attempts and waits between them, and per call
// a retryBudget, which says when they end.
type retryPolicy struct {
	retryer aws.Retryer
	// maxAttempts is Options.MaxAttempts.
	maxAttempts int
}

// newRetryPolicy returns the policy of Options.MaxAttempts attempts and
// backoff b.
func newRetryPolicy(maxAttempts int, b backoff) retryPolicy {
	return retryPolicy{retryer: newRetryer(b), maxAttempts: maxAttempts}
}

// clientOption makes a request run with the policy's retryer and gives it
// a retryBudget of its own.
func (p retryPolicy) clientOption(o *dynamodb.Options) {
	o.Retryer = p.retryer
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		b := &retryBudget{retryer: p.retryer, maxAttempts: p.maxAttempts}
		if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("timetable.RetryBudget", b.call), middleware.After); err != nil {
			return err
		}
		// After the retryer, so inside its loop: it sees every attempt.
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("timetable.RetryBudgetAttempt", b.attempt), "Retry", middleware.After)
	})
}

// newRetryer returns the SDK's standard retryer with the store's backoff
// and no attempt count of its own (retry.AddWithMaxAttempts with 0, which
// the SDK reads as no limit): each call's retryBudget ends the retries,
// by making the last error one the retryer does not retry.
// refusalsNotRetried and attemptsSpent take precedence over the SDK's own
// list of retryable errors.
//
// The SDK's retry quota is off (ratelimit.None). That quota is a token
// bucket shared by every call of the client: 500 tokens, 5 taken per
// retry and given back only when the retry succeeds, 1 earned per call
// that succeeds at once. Under sustained throttling, where DynamoDB is
// the one deciding the rate and retries with backoff are the remedy it
// asks for, the bucket runs dry within a few hundred calls and every later
// call fails at its first throttle ("retry quota exceeded"), however long
// it may wait.
func newRetryer(b backoff) aws.Retryer {
	return retry.AddWithMaxAttempts(retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxBackoff = b.max
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			// The SDK numbers retries from 1 (from 0 when
			// AWS_NEW_RETRIES_2026 is set).
			return b.delay(max(attempt-1, 0)), nil
		})
		o.RateLimiter = ratelimit.None
		o.Retryables = append([]retry.IsErrorRetryable{refusalsNotRetried, attemptsSpent}, o.Retryables...)
	}), 0)
}

// retryBudget ends the retries of one call. Throttling, in a call whose
// context has a deadline, is retried until the deadline: DynamoDB asks
// for a lower rate, the backoff gives it one, and the caller's deadline
// says how long the answer may wait. Every other retryable error (a 5xx,
// a dropped connection), and throttling in a call whose context has no
// deadline, counts against maxAttempts; the error of the last attempt
// that counts is wrapped in a *retry.MaxAttemptsError, which the retryer
// does not retry (attemptsSpent). The retryer makes a call's attempts one
// after another, so a budget is never used by two goroutines at once.
type retryBudget struct {
	retryer     aws.Retryer
	maxAttempts int
	// counted is how many attempts failed with an error that counts.
	counted int
	// throttled is the error of the last attempt when DynamoDB throttled
	// it, nil otherwise.
	throttled error
}

// attempt counts one attempt's error against the budget.
func (b *retryBudget) attempt(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleFinalize(ctx, in)
	b.throttled = nil
	if err == nil || !b.retryer.IsErrorRetryable(err) {
		return out, md, err
	}
	if isThrottle(err) {
		b.throttled = err
		if _, ok := ctx.Deadline(); ok {
			return out, md, err
		}
	}
	b.counted++
	if b.counted >= b.maxAttempts {
		err = &retry.MaxAttemptsError{Attempt: b.counted, Err: err}
	}
	return out, md, err
}

// call keeps, in the error of a call whose context ended while DynamoDB
// was throttling it, the throttling error as well as the context's: the
// call was throttled until its deadline (storage.ErrThrottled, by
// mapError), not cut short by anything else.
func (b *retryBudget) call(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil && b.throttled != nil && ctx.Err() != nil && !isThrottle(err) {
		err = fmt.Errorf("throttled until the context ended: %w: %w", b.throttled, err)
	}
	return out, md, err
}

// attemptsSpent keeps the retryer from retrying an error that a
// retryBudget marked as the last.
var attemptsSpent = retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
	var spent *retry.MaxAttemptsError
	if errors.As(err, &spent) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
})
