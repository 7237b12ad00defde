package server

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/event"
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
func (s *Server) writeEvents(w http.ResponseWriter, r *http.Request, tenant string) error {
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
	b, err := s.readBody(w, r, tenant)
	if err != nil {
		return err
	}
	defer b.release()
	body := b.buf
	if err := s.checkBytes(r.Context(), tenant, int64(len(body))); err != nil {
		return err
	}
	held, err := s.holdEvents(r.Context(), tenant, body, isNDJSON)
	if err != nil {
		return err
	}
	defer held.Release()
	slot, err := s.cpuSlot(r.Context(), tenant)
	if err != nil {
		return err
	}
	events, err := decode(body, lim, opts.Clock.Now())
	slot()
	if err != nil {
		return err
	}
	// The events hold nothing of the body (event.Batch): it goes back
	// to the body budget before they are written.
	size := int64(len(body))
	b.release()
	body = nil
	if events.Len() > s.opts.MaxEvents {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: %d events in one request, over the limit of %d (max_events): split the batch", events.Len(), s.opts.MaxEvents)}
	}
	if err := s.fitEvents(r.Context(), held, events); err != nil {
		return err
	}
	if err := s.allowWrite(r.Context(), tenant, events.Len(), size); err != nil {
		return err
	}
	if slot, err = s.cpuSlot(r.Context(), tenant); err != nil {
		return err
	}
	n, err := s.db.WriteBatch(r.Context(), tenant, r.PathValue("table"), events)
	slot()
	if err != nil {
		return &writeFailure{written: n, err: err}
	}
	writeJSON(w, http.StatusOK, api.Written{Written: n})
	return nil
}

// cpuSlot waits for a slot of the engine's pool of CPU slots
// (engine.Options.CPU, admission.CPU.AcquireFor) for tenant's write, or
// for ctx to end. A write takes one for its decoding and another for its
// write, once it has its body, its share of the budgets and its rate,
// so that it never holds a slot while it waits on its client or on
// another tenant: writes and aggregates of every series together keep
// one core for other tenants' light requests.
func (s *Server) cpuSlot(ctx context.Context, tenant string) (func(), error) {
	return s.db.Options().CPU.AcquireFor(ctx, tenant)
}

// isJSONArray reports whether a write's Content-Type is a JSON array's
// (decoderFor accepted it).
func isJSONArray(contentType string) bool {
	media, _, _ := mime.ParseMediaType(contentType)
	return contentType == "" || media == mediaJSON
}
