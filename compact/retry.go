package compact

import (
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/registry"
)

// ErrRetryLater refuses to start a rewrite of a table whose last rewrite
// failed its verification before the time that failure set (registry
// RewriteFailure.RetryAt); Options.Retry starts it anyway.
var ErrRetryLater = errors.New("timetable: the table's last rewrite failed its verification, and the next is put off")

// The delays between rewrites of a table that fail their verification.
const (
	// FirstRetryDelay is how long after a first failure the next
	// rewrite may start.
	FirstRetryDelay = time.Hour
	// MaxRetryDelay is the longest delay: a week.
	MaxRetryDelay = 7 * 24 * time.Hour
)

// RetryDelay returns how long after the failure of the n-th rewrite in a
// row of a table (n from 1) the next may start: FirstRetryDelay, doubled
// for each failure before it, at most MaxRetryDelay.
func RetryDelay(n int) time.Duration {
	d := FirstRetryDelay
	for i := 1; i < n && d < MaxRetryDelay; i++ {
		d *= 2
	}
	return min(d, MaxRetryDelay)
}

// RetryDue reports whether a new rewrite of the table of entry e may
// start at now: none failed, or the last failure's RetryAt has come. A
// rewrite under way (e.Rewrite) is always resumed.
func RetryDue(e registry.Entry, now time.Time) bool {
	return e.Rewrite != nil || e.RewriteFailed == nil || !now.Before(e.RewriteFailed.RetryAt)
}

// retryDue returns an error wrapping ErrRetryLater when a new rewrite of
// e may not start at now (RetryDue), unless opts.Retry.
func retryDue(e registry.Entry, now time.Time, opts Options) error {
	if opts.Retry || RetryDue(e, now) {
		return nil
	}
	f := e.RewriteFailed
	return fmt.Errorf("%w: %d failed in a row, the last at %s; the next from %s", ErrRetryLater,
		f.Count, f.At.Format(time.RFC3339), f.RetryAt.Format(time.RFC3339))
}
