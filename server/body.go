package server

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/timetabledb/timetable/event"
)

// Request bodies are read in bounded memory:
//
//   - a body is read as it arrives, its buffer grown a step at a time, never
//     reserved from the Content-Length a client declares;
//   - every byte of buffer the server holds for request bodies comes out of
//     one server-wide budget (Options.MaxBodyBytesInFlight). A request
//     whose next step does not fit waits up to Options.BodyBudgetWait for
//     other requests to finish, then gets 503 with Retry-After: the bytes
//     in flight never pass the budget, whatever the clients do;
//   - a body must arrive within Options.BodyReadTimeout of the request's
//     start, or the request gets 408: a client that sends one byte a
//     minute holds nothing for long.
//
// A request's share is given back once its write is done, since the
// decoded events refer to the body's bytes.

// bodyStep is the smallest growth of a body's buffer: the budget is taken
// in steps of at least this much.
const bodyStep = 64 << 10

// bodyBudget is the server-wide budget of request body bytes in flight.
type bodyBudget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

func newBodyBudget(size int64, wait time.Duration) *bodyBudget {
	return &bodyBudget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// body is a request body being read into memory under the budget.
type body struct {
	budget *bodyBudget
	buf    []byte
	held   int64
}

// grow makes room for at least one more byte, up to limit+1 bytes (one
// past the limit, to tell a body over it), taking the growth out of the
// budget.
func (b *body) grow(ctx context.Context, limit int64) error {
	n := int64(cap(b.buf))
	want := min(limit+1, max(2*n, bodyStep))
	step := want - n
	if step <= 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, b.budget.wait)
	defer cancel()
	if err := b.budget.sem.Acquire(wctx, step); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &httpError{status: http.StatusServiceUnavailable, msg: fmt.Sprintf("timetable: the server holds %d bytes of request bodies, its limit: retry the request", b.budget.size)}
	}
	b.held += step
	grown := make([]byte, len(b.buf), want)
	copy(grown, b.buf)
	b.buf = grown
	return nil
}

// release gives the body's bytes back to the budget. It is safe to call
// twice.
func (b *body) release() {
	if b.held > 0 {
		b.budget.sem.Release(b.held)
		b.held = 0
	}
	b.buf = nil
}

// readBody reads a request body whole, decompressing it when it is
// gzipped, within the body budget and the read timeout; it refuses a body
// over Options.MaxBodyBytes with 413. The caller releases the body once
// done with its bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (*body, error) {
	max := s.opts.MaxBodyBytes
	tooLarge := &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: request body over the limit of %d bytes: split the batch", max)}
	if r.ContentLength > max {
		return nil, tooLarge
	}
	// A deadline for the whole body, from the request's start.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.BodyReadTimeout))
	var in io.Reader = http.MaxBytesReader(w, r.Body, max)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(in)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, s.bodyTimeout()
			}
			return nil, fmt.Errorf("%w: Content-Encoding is gzip but the body is not: %v", event.ErrMalformedBody, err)
		}
		defer zr.Close()
		// The limit holds for the decompressed body too: a small body
		// must not unpack into gigabytes.
		in = io.LimitReader(zr, max+1)
	default:
		return nil, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Encoding %q is not supported; send the body as is or gzip", enc)}
	}
	b := &body{budget: s.bodies}
	for {
		if len(b.buf) == cap(b.buf) {
			if int64(len(b.buf)) > max {
				b.release()
				return nil, tooLarge
			}
			if err := b.grow(r.Context(), max); err != nil {
				b.release()
				return nil, err
			}
		}
		n, err := in.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			b.release()
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				return nil, tooLarge
			case errors.Is(err, os.ErrDeadlineExceeded):
				return nil, s.bodyTimeout()
			}
			// A broken gzip stream, or a client that stopped sending.
			return nil, &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: read request body: %v", err)}
		}
	}
	if int64(len(b.buf)) > max {
		b.release()
		return nil, tooLarge
	}
	return b, nil
}

func (s *Server) bodyTimeout() error {
	return &httpError{status: http.StatusRequestTimeout, msg: fmt.Sprintf("timetable: the request body did not arrive within %s: send it faster, or in smaller batches", s.opts.BodyReadTimeout)}
}
