package compact

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// Entries is where compaction records what it does to a table: the
// registry (registry.Registry implements it).
type Entries interface {
	Save(ctx context.Context, e registry.Entry) (registry.Entry, error)
}

// ErrNotPackable refuses a table whose events cannot go into chunks: one
// that is not live.
var ErrNotPackable = errors.New("timetable: table cannot be packed into chunks")

// Packable reports whether a table of entry e can be compacted, and why
// not.
func Packable(e registry.Entry) error {
	if !e.State.Live() {
		return fmt.Errorf("table %q is %s: %w", e.Name, e.State, ErrNotPackable)
	}
	return nil
}

// AsChunks returns e with its layout made chunk, at window when it was
// another (a row or map table packed later), so that readers decode the
// chunks compaction writes. A chunk table keeps its own window.
func AsChunks(e registry.Entry, window time.Duration) registry.Entry {
	if e.Policy.Layout != family.LayoutChunk || e.Policy.ChunkWindow <= 0 {
		e.Policy.Layout = family.LayoutChunk
		e.Policy.ChunkWindow = window
	}
	return e
}

// Entry compacts the table of registry entry e by opts.Method: Rewrite
// for NextGeneration or a rewrite under way (e.Rewrite), which needs st to
// be a RewriteStore and entries a Rewriter. In place, it compacts the
// table from its checkpoint
// (e.CompactAfter), saving the checkpoint in entries as it goes and, once
// the table is done, the time (now) in e.ChunkedAt. The entry must
// already say the table holds chunks (AsChunks, saved, and seen by every
// reader); an entry that does not is refused. opts' Window, Scheme,
// Shards, After and Checkpoint are taken from the entry. It returns the
// entry as last saved.
func Entry(ctx context.Context, st Store, entries Entries, e registry.Entry, now time.Time, opts Options) (registry.Entry, Result, error) {
	if err := Packable(e); err != nil {
		return e, Result{}, err
	}
	if opts.Method == NextGeneration || e.Rewrite != nil {
		rst, ok := st.(RewriteStore)
		rent, ok2 := entries.(Rewriter)
		if !ok || !ok2 {
			return e, Result{}, fmt.Errorf("rewrite table %q: the store cannot make and delete tables", e.Name)
		}
		return Rewrite(ctx, rst, rent, e, now, opts)
	}
	if e.ChunkWindow() <= 0 {
		return e, Result{}, fmt.Errorf("compact table %q: its registry entry says layout %q: make it chunk first", e.Name, e.Policy.Layout)
	}
	opts.Window, opts.Scheme, opts.Shards, opts.After = e.ChunkWindow(), e.IDScheme(), e.Shards(), e.CompactAfter
	opts.Checkpoint = func(ctx context.Context, after storage.Key) error {
		e.CompactAfter = after
		if after == (storage.Key{}) {
			e.ChunkedAt = now.UTC()
			if opts.Unfence {
				e.FencedAt = time.Time{}
			}
		}
		e.UpdatedAt = now.UTC()
		saved, err := entries.Save(ctx, e)
		if err != nil {
			return err
		}
		e = saved
		return nil
	}
	res, err := Table(ctx, st, e.TableName(), opts)
	return e, res, err
}
