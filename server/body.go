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
// The write pipeline reads the body (ingest.Write.Run) and gives its
// share back once it is decoded: the decoded events hold nothing of it.
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

// bodyReader returns the reader of a write request's body for the write
// pipeline (ingest.Write.Run, which reads it whole within the body budget
// and Options.MaxBodyBytes), decompressing it when it is gzipped, and the
// length the client declared (-1 for a gzipped body: the length it
// declared is the compressed one). It refuses a body declared over
// Options.MaxBodyBytes with 413, and sets the deadline of the whole body,
// Options.BodyReadTimeout from the request's start.
func (s *Server) bodyReader(w http.ResponseWriter, r *http.Request) (io.Reader, int64, error) {
	max := s.opts.MaxBodyBytes
	if r.ContentLength > max {
		return nil, 0, &httpError{status: http.StatusRequestEntityTooLarge, msg: (&ingest.BodyTooLargeError{Max: max}).Error()}
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.BodyReadTimeout))
	in := http.MaxBytesReader(w, r.Body, max)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return in, r.ContentLength, nil
	case "gzip":
		return &gunzip{in: in}, -1, nil
	default:
		return nil, 0, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Encoding %q is not supported; send the body as is or gzip", enc)}
	}
}

// gunzip decompresses a gzipped body, from its first Read: its header is
// read with the body, once the write has its turn and room for it.
type gunzip struct {
	in io.Reader
	zr *gzip.Reader
}

func (g *gunzip) Read(p []byte) (int, error) {
	if g.zr == nil {
		zr, err := gzip.NewReader(g.in)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, err
			}
			return 0, fmt.Errorf("%w: Content-Encoding is gzip but the body is not: %v", event.ErrMalformedBody, err)
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

// ingestAnswer turns the write pipeline's refusal of a write before it
// is stored (ingest.Write.Run) into the answer: a body over the limit
// 413, one that did not arrive in time 408, a broken one 400; a turn,
// budget or rate refusal as admissionAnswer; more events than
// max_events 413, naming them unit (events, lines). A refusal before any
// of the body was read stays one (unreadBody), so that the body is not
// asked for. Any other error is returned as it is.
func (s *Server) ingestAnswer(ctx context.Context, tenant string, err error, unit string) error {
	var unread *ingest.UnreadError
	if errors.As(err, &unread) {
		return &unreadBody{s.ingestAnswer(ctx, tenant, unread.Err, unit)}
	}
	var large *ingest.BodyTooLargeError
	var read *ingest.ReadError
	var many *ingest.TooManyEventsError
	switch {
	case errors.As(err, &large):
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: large.Error()}
	case errors.As(err, &read):
		var mbe *http.MaxBytesError
		switch {
		case errors.As(read.Err, &mbe):
			return &httpError{status: http.StatusRequestEntityTooLarge, msg: (&ingest.BodyTooLargeError{Max: s.opts.MaxBodyBytes}).Error()}
		case errors.Is(read.Err, os.ErrDeadlineExceeded):
			return s.bodyTimeout()
		case errors.Is(read.Err, event.ErrMalformedBody):
			return read.Err
		}
		// A broken gzip stream, or a client that stopped sending.
		return &httpError{status: http.StatusBadRequest, msg: read.Error()}
	case errors.As(err, &many):
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: %d %s in one request, over the limit of %d (max_events): split the batch", many.Events, unit, many.Max)}
	}
	return s.admissionAnswer(ctx, tenant, err)
}

func (s *Server) bodyTimeout() error {
	return &httpError{status: http.StatusRequestTimeout, msg: fmt.Sprintf("timetable: the request body did not arrive within %s: send it faster, or in smaller batches", s.opts.BodyReadTimeout)}
}

// unreadBody is a refusal of a request before any of its body was read.
type unreadBody struct{ error }

func (e *unreadBody) Unwrap() error { return e.error }

// bodyStarted reports whether the server began reading the body of a
// request that err refused: not when the write pipeline refused it before
// its first read (unreadBody).
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
