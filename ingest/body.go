package ingest

import (
	"context"
	"fmt"
	"io"
)

// BodyStep is the smallest growth of a body's buffer: the body budget is
// taken in steps of at least this much.
const BodyStep = 64 << 10

// BodyTooLargeError is a body over Options.MaxBodyBytes.
type BodyTooLargeError struct {
	Max int64
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("timetable: request body over the limit of %d bytes (max_body_bytes): split the batch", e.Max)
}

// ReadError is a body whose reader failed: the error is the reader's,
// for the protocol to word (a deadline, a limit of its own, a broken
// stream).
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return fmt.Sprintf("timetable: read request body: %v", e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// UnreadError is a write refused before any of its body was read: no
// turn, or no room for its first bytes. A protocol that answers before
// its client sends the body (HTTP's "Expect: 100-continue") need not
// read it.
type UnreadError struct{ Err error }

func (e *UnreadError) Error() string { return e.Err.Error() }
func (e *UnreadError) Unwrap() error { return e.Err }

// readBody reads body whole into memory held in the body budget, its
// buffer grown a step at a time as the bytes arrive, never reserved from
// the length its sender declared: declared (-1 when unknown) only keeps
// the last step from overshooting. A body over Options.MaxBodyBytes is a
// *BodyTooLargeError; a refusal of the budget is its error, in an
// *UnreadError when no byte was read yet; the reader's failure a
// *ReadError. What the buffer holds of the budget is given back on
// failure, and by Admit once the body is decoded.
func (w *Write) readBody(ctx context.Context, body io.Reader, declared int64) ([]byte, error) {
	limit := w.p.opts.MaxBodyBytes
	var buf []byte
	fail := func(err error) ([]byte, error) {
		_ = w.holdBody(context.Background(), 0) // giving back never waits nor fails
		return nil, err
	}
	for {
		if len(buf) == cap(buf) {
			if limit > 0 && int64(len(buf)) > limit {
				return fail(&BodyTooLargeError{Max: limit})
			}
			n := int64(cap(buf))
			want := max(2*n, BodyStep)
			if limit > 0 {
				want = min(limit+1, want) // one past the limit, to tell a body over it
			}
			if declared >= 0 && n <= declared && want > declared+1 {
				want = declared + 1 // a body of 15 MiB holds 15 MiB, not 16
			}
			if err := w.holdBody(ctx, want); err != nil {
				if n == 0 {
					err = &UnreadError{Err: err}
				}
				return fail(err)
			}
			grown := make([]byte, len(buf), want)
			copy(grown, buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(&ReadError{Err: err})
		}
	}
	if limit > 0 && int64(len(buf)) > limit {
		return fail(&BodyTooLargeError{Max: limit})
	}
	return buf, nil
}

// holdBody makes what the write's body holds of the body budget
// (Options.BodyBudget) n bytes, waiting as the mode says, or gives back
// the excess at once. Its errors are the budget's. Without a body budget
// it holds nothing.
func (w *Write) holdBody(ctx context.Context, n int64) error {
	if w.body == nil {
		return nil
	}
	if n <= w.body.Held() {
		return w.body.Resize(ctx, n)
	}
	wctx, cancel := w.wait(ctx)
	defer cancel()
	return w.body.Resize(wctx, n)
}
