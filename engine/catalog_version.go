package engine

import (
	"context"
	"sync"
	"time"
)

// versionReadTimeout bounds a read of a family's version, which the
// context of the query that began it does not cancel.
const versionReadTimeout = 10 * time.Second

// versionReads coalesces a server's reads of one family's registry
// version, so that a busy server reads it about once per round trip to
// the store rather than once per query, and a family's version item, one
// partition on DynamoDB, is read by each server at a bounded rate.
//
// A query must see every version raised before it began, so it may share
// only a read that begins after it arrived: a caller that finds no read
// in flight begins one; a caller that finds one in flight joins the next
// read, which begins once that one is done, begun by whichever of its
// callers comes first. A read is not cancelled by its beginner's context
// (the others wait for it), only bounded by the store's own timeouts; a
// caller whose context ends stops waiting.
type versionReads struct {
	mu sync.Mutex
	// inflight is the read begun and not yet done, if any.
	inflight *versionRead
	// next is the read callers join while inflight runs; never begun.
	next *versionRead
}

// versionRead is one read of a version and its answer.
type versionRead struct {
	done  chan struct{}
	begun bool
	// joined counts the callers that joined the read before it began.
	joined int
	v      int64
	err    error
}

// read returns the version as read by a read that began after the call
// did, through read.
func (vr *versionReads) read(ctx context.Context, read func(context.Context) (int64, error)) (int64, error) {
	vr.mu.Lock()
	if vr.inflight == nil {
		r := &versionRead{done: make(chan struct{}), begun: true}
		vr.inflight = r
		vr.mu.Unlock()
		return vr.run(ctx, r, read)
	}
	prev := vr.inflight
	if vr.next == nil {
		vr.next = &versionRead{done: make(chan struct{})}
	}
	r := vr.next
	r.joined++
	vr.mu.Unlock()

	select {
	case <-prev.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	vr.mu.Lock()
	if !r.begun {
		// The first of r's callers to find the read before it done
		// begins r: it begins after every caller that joined it arrived,
		// since a read stops taking callers when it begins.
		r.begun = true
		vr.next = nil
		if vr.inflight == nil {
			vr.inflight = r
		}
		vr.mu.Unlock()
		return vr.run(ctx, r, read)
	}
	vr.mu.Unlock()
	select {
	case <-r.done:
		return r.v, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run makes the read r and hands its answer to every caller of it.
func (vr *versionReads) run(ctx context.Context, r *versionRead, read func(context.Context) (int64, error)) (int64, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), versionReadTimeout)
	r.v, r.err = read(rctx)
	cancel()
	vr.mu.Lock()
	if vr.inflight == r {
		vr.inflight = nil
	}
	vr.mu.Unlock()
	close(r.done)
	return r.v, r.err
}
