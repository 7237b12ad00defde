package dynamostore

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
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

// newRetryer returns the SDK's standard retryer with the store's attempt
// count and backoff; refusalsNotRetried takes precedence over the SDK's
// own list of retryable errors.
//
// The SDK's retry quota is off (ratelimit.None). That quota is a token
// bucket shared by every call of the client: 500 tokens, 5 taken per
// retry and given back only when the retry succeeds, 1 earned per call
// that succeeds at once. Under sustained throttling, where DynamoDB is
// the one deciding the rate and retries with backoff are the remedy it
// asks for, the bucket runs dry within a few hundred calls and every later
// call fails at its first throttle ("retry quota exceeded"), however many
// attempts it was promised. Without it each call gets its MaxAttempts, and
// its context bounds the whole of them, backoffs included.
func newRetryer(maxAttempts int, b backoff) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.MaxBackoff = b.max
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			// The SDK numbers retries from 1 (from 0 when
			// AWS_NEW_RETRIES_2026 is set).
			return b.delay(max(attempt-1, 0)), nil
		})
		o.RateLimiter = ratelimit.None
		o.Retryables = append([]retry.IsErrorRetryable{refusalsNotRetried}, o.Retryables...)
	})
}
