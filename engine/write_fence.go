package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/storage"
)

// ErrFenced marks a write refused because the table its events go to is
// fenced: the lifecycle is archiving and deleting it (registry
// Entry.FencedAt). It wraps storage.ErrUnavailable, so the server
// answers 503 with Retry-After: once the table is deleted, the same
// write makes the table's next generation and lands there.
var ErrFenced = fmt.Errorf("timetable: table fenced for archive and deletion: %w", storage.ErrUnavailable)

// checkFence refuses a table the lifecycle fenced.
func checkFence(t physTable) error {
	if t.entry.Fenced() {
		return fmt.Errorf("write to table %q (fenced %s): %w", t.name, t.entry.FencedAt.Format("2006-01-02T15:04:05Z07:00"), ErrFenced)
	}
	return nil
}

// fresh reports whether a cached route was read from the registry less
// than RouteTTL ago: a write trusts it without reading its entry again.
// Adopted tables (no registry entry to read) are always fresh.
func (c *catalog) fresh(t physTable) bool {
	return t.learned.IsZero() || c.clock.Now().Sub(t.learned) < c.routeTTL
}

// pastWriteTimeout turns the error of a write that ran out of its
// WriteTimeout (ctx), while its caller's context (parent) still had
// time, into one wrapping storage.ErrUnavailable: the server answers 503
// with Retry-After instead of hanging, and the client retries, which is
// harmless (a retried event lands on the item it wrote before).
func (db *DB) pastWriteTimeout(parent, ctx context.Context, err error) error {
	if err == nil || parent.Err() != nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, storage.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: the write took more than %v: %w", storage.ErrUnavailable, db.opts.WriteTimeout, err)
}
