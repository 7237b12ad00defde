package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/ingest"
)

// decoder decodes a request body into events.
type decoder func(body []byte, lim event.Limits, now time.Time) (event.Batch, error)

// Media types of a write request's body.
const (
	mediaJSON   = api.MediaJSON
	mediaNDJSON = api.MediaNDJSON
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
func (s *Server) writeEvents(w http.ResponseWriter, r *http.Request, in *ingest.Write) error {
	decode, err := decoderFor(r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	isNDJSON := !isJSONArray(r.Header.Get("Content-Type"))
	opts := s.db.Options()
	lim := opts.Limits
	if lim.Precision, err = event.ParsePrecision(r.URL.Query().Get("precision")); err != nil {
		return fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	b, err := s.readBody(w, r, in)
	if err != nil {
		return err
	}
	defer b.release()
	var events event.Batch
	err = in.Admit(r.Context(), b.buf, isNDJSON, func() ([]event.Batch, error) {
		events, err = decode(b.buf, lim, opts.Clock.Now())
		return []event.Batch{events}, err
	})
	var many *ingest.TooManyEventsError
	if errors.As(err, &many) {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: %d events in one request, over the limit of %d (max_events): split the batch", many.Events, many.Max)}
	}
	if err != nil {
		return s.admissionAnswer(r.Context(), in.Tenant(), err)
	}
	// The events hold nothing of the body (event.Batch): it goes back
	// to the body budget before they are written.
	b.release()
	n, err := in.Store(r.Context(), []engine.TableEvents{{Table: r.PathValue("table"), Events: events}})
	if err != nil {
		if te, ok := err.(*engine.TableError); ok {
			err = te.Err // the one table's refusal, as it is
		}
		return &writeFailure{written: n, err: err}
	}
	writeJSON(w, http.StatusOK, api.Written{Written: n})
	return nil
}

// isJSONArray reports whether a write's Content-Type is a JSON array's
// (decoderFor accepted it).
func isJSONArray(contentType string) bool {
	media, _, _ := mime.ParseMediaType(contentType)
	return contentType == "" || media == mediaJSON
}
