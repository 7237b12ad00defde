package server

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/ingest"
)

// Request bodies are read in bounded memory:
//
//   - a body is read as it arrives, its buffer grown a step at a time, never
//     reserved from the Content-Length a client declares;
//   - every byte of buffer the server holds for request bodies comes out of
//     one server-wide budget (Options.MaxBodyBytesInFlight), of which one
//     tenant holds at most its share (Options.TenantShare). A request
//     whose next step does not fit waits up to Options.BodyBudgetWait for
//     other requests to finish, then gets 503 with Retry-After (the
//     budget is full) or 429 with Retry-After (its tenant holds its
//     share): the bytes in flight never pass the budget, whatever the
//     clients do, and one tenant's slow uploads leave room for others;
//   - a body must arrive within Options.BodyReadTimeout of the request's
//     start, or the request gets 408: a client that sends one byte a
//     minute holds nothing for long.
//
// A request's share is given back once its write is done, since the
// decoded events refer to the body's bytes.
//
// A write refused with 429 or 503 (a budget, a rate, its tenant's
// concurrent writes) before its body is read whole has the rest of its
// body read and thrown away before the answer goes (discardBody): up to
// Options.MaxBodyBytes, within Options.BodyReadTimeout, in a small buffer,
// and at most Options.MaxBodyBytesInFlight bytes a second for all such
// bodies together. A client that sends its whole body before it reads
// (Python's http.client, and so requests and InfluxDB's Python client)
// would otherwise find the connection closed under it and see a broken
// pipe rather than the status and its Retry-After. A request with
// "Expect: 100-continue" refused before its body is read is answered at
// once: the client, waiting for 100 Continue, sends no body.
//
// A write's API key is checked when the request starts, and again once
// its body has arrived (ingest.Write.Admit): a key revoked during an
// upload writes nothing.

// bodyStep is the smallest growth of a body's buffer: the budget is taken
// in steps of at least this much.
const bodyStep = 64 << 10

// body is a request body being read into memory under the body budget.
type body struct {
	// in is the write whose body it is, which holds its bytes of the
	// body budget (ingest.Write.HoldBody).
	in  *ingest.Write
	buf []byte
}

// grow makes room for at least one more byte, up to limit+1 bytes (one
// past the limit, to tell a body over it), taking the growth out of the
// budget. A body whose length the client declared (declared >= 0) grows
// to one byte past it at most, where doubling would overshoot: a body
// of 15 MiB holds 15 MiB, not 16.
func (b *body) grow(ctx context.Context, limit, declared int64) error {
	n := int64(cap(b.buf))
	want := min(limit+1, max(2*n, bodyStep))
	if declared >= 0 && n <= declared && want > declared+1 {
		want = declared + 1
	}
	if want <= n {
		return nil
	}
	if err := b.in.HoldBody(ctx, want); err != nil {
		return budgetError(ctx, err)
	}
	grown := make([]byte, len(b.buf), want)
	copy(grown, b.buf)
	b.buf = grown
	return nil
}

// release gives the body's bytes back to the budget. It is safe to call
// twice.
func (b *body) release() {
	_ = b.in.HoldBody(context.Background(), 0) // giving back never waits nor fails
	b.buf = nil
}

// readBody reads a request body whole, decompressing it when it is
// gzipped, within the body budget and the read timeout; it refuses a body
// over Options.MaxBodyBytes with 413. The caller releases the body once
// done with its bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, write *ingest.Write) (*body, error) {
	max := s.opts.MaxBodyBytes
	tooLarge := &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: request body over the limit of %d bytes (max_body_bytes): split the batch", max)}
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
	b := &body{in: write}
	for {
		if len(b.buf) == cap(b.buf) {
			if int64(len(b.buf)) > max {
				b.release()
				return nil, tooLarge
			}
			declared := r.ContentLength
			if r.Header.Get("Content-Encoding") == "gzip" {
				declared = -1 // the length of the compressed body
			}
			if err := b.grow(r.Context(), max, declared); err != nil {
				unread := cap(b.buf) == 0
				b.release()
				if unread {
					return nil, &unreadBody{err}
				}
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

// unreadBody is a refusal of a request before any of its body was read.
type unreadBody struct{ error }

func (e *unreadBody) Unwrap() error { return e.error }

// bodyStarted reports whether the server began reading the body of a
// request that err refused: not when readBody refused it before its
// first read (unreadBody).
func bodyStarted(err error) bool {
	var u *unreadBody
	return !errors.As(err, &u)
}

// discardStep is the buffer discardBody reads a refused body into.
const discardStep = 32 << 10

// discardBuffers holds discardBody's buffers between refusals.
var discardBuffers = sync.Pool{New: func() any { return new([discardStep]byte) }}

// discardBody reads what is left of a refused request's body and throws
// it away, so that a client that sends the whole body before it reads
// the answer gets to read it: up to Options.MaxBodyBytes (a body over it
// is refused anyway, and its connection closed), until
// Options.BodyReadTimeout from now, at the rate of s.discards for all
// refused bodies together. It reads nothing of a request with "Expect:
// 100-continue" whose body was not asked for (started reports whether
// the server began reading it): reading would ask for it.
func (s *Server) discardBody(w http.ResponseWriter, r *http.Request, started bool) {
	if !started && r.Header.Get("Expect") == "100-continue" {
		return
	}
	deadline := time.Now().Add(s.opts.BodyReadTimeout)
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	buf := discardBuffers.Get().(*[discardStep]byte)
	defer discardBuffers.Put(buf)
	in := io.LimitReader(r.Body, s.opts.MaxBodyBytes+1)
	for {
		n, err := in.Read(buf[:])
		if n > 0 && s.discards.WaitN(ctx, n) != nil {
			return
		}
		if err != nil {
			return
		}
	}
}
