package server

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/timetabledb/timetable/event"
)

// decoder decodes a request body into events.
type decoder func(body []byte, lim event.Limits, now time.Time) ([]event.Event, error)

// Media types of a write request's body.
const (
	mediaJSON   = "application/json"
	mediaNDJSON = "application/x-ndjson"
)

// decoderFor returns the decoder of a Content-Type: JSON (also when there
// is none) or NDJSON.
func decoderFor(contentType string) (decoder, error) {
	if contentType == "" {
		return event.DecodeJSON, nil
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Type %q does not parse; send %s or %s", contentType, mediaJSON, mediaNDJSON)}
	}
	switch media {
	case mediaJSON:
		return event.DecodeJSON, nil
	case mediaNDJSON, "application/ndjson", "application/jsonl":
		return event.DecodeNDJSON, nil
	}
	return nil, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Type %s is not supported; send a JSON array as %s, or one event per line as %s", media, mediaJSON, mediaNDJSON)}
}

// writeEvents answers POST /v1/tables/{table}/events.
func (s *Server) writeEvents(w http.ResponseWriter, r *http.Request, tenant string) error {
	decode, err := decoderFor(r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	opts := s.db.Options()
	lim := opts.Limits
	if lim.Precision, err = event.ParsePrecision(r.URL.Query().Get("precision")); err != nil {
		return fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	events, err := decode(body, lim, opts.Clock.Now())
	if err != nil {
		return err
	}
	if len(events) > s.opts.MaxEvents {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: %d events in one request, over the limit of %d: split the batch", len(events), s.opts.MaxEvents)}
	}
	n, err := s.db.WriteDecoded(r.Context(), tenant, r.PathValue("table"), events)
	if err != nil {
		return &writeFailure{written: n, err: err}
	}
	writeJSON(w, http.StatusOK, map[string]int{"written": n})
	return nil
}

// readBody reads a request body whole, decompressing it when it is
// gzipped, and refuses one over Options.MaxBodyBytes with 413.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	max := s.opts.MaxBodyBytes
	tooLarge := &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: request body over the limit of %d bytes: split the batch", max)}
	if r.ContentLength > max {
		return nil, tooLarge
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, max)
	gzipped := false
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("%w: Content-Encoding is gzip but the body is not: %v", event.ErrMalformedBody, err)
		}
		defer zr.Close()
		// The limit holds for the decompressed body too: a small body
		// must not unpack into gigabytes.
		body, gzipped = io.LimitReader(zr, max+1), true
	default:
		return nil, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Encoding %q is not supported; send the body as is or gzip", enc)}
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 && !gzipped {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		// A broken gzip stream, or a client that stopped sending.
		return nil, &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: read request body: %v", err)}
	}
	if int64(buf.Len()) > max {
		return nil, tooLarge
	}
	return buf.Bytes(), nil
}
