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
	opts := s.db.Options()
	dec := &jsonBody{table: r.PathValue("table"), decode: decode, lim: opts.Limits, now: opts.Clock.Now(),
		lines: !isJSONArray(r.Header.Get("Content-Type"))}
	if dec.lim.Precision, err = event.ParsePrecision(r.URL.Query().Get("precision")); err != nil {
		return fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	body, declared, err := s.bodyReader(w, r)
	if err != nil {
		return err
	}
	n, err := in.Run(r.Context(), body, declared, dec)
	var failed *ingest.StoreError
	if errors.As(err, &failed) {
		err = failed.Err
		if te, ok := err.(*engine.TableError); ok {
			err = te.Err // the one table's refusal, as it is
		}
		return &writeFailure{written: n, err: err}
	}
	if err != nil {
		return s.ingestAnswer(r.Context(), in.Tenant(), err, "events")
	}
	writeJSON(w, http.StatusOK, api.Written{Written: n})
	return nil
}

// jsonBody is the decoder of a JSON or NDJSON body of one table
// (ingest.Decoder).
type jsonBody struct {
	table  string
	decode decoder
	lim    event.Limits
	now    time.Time
	lines  bool
}

func (d *jsonBody) Decode(body []byte) ([]engine.TableEvents, error) {
	events, err := d.decode(body, d.lim, d.now)
	if err != nil {
		return nil, err
	}
	return []engine.TableEvents{{Table: d.table, Events: events}}, nil
}

func (d *jsonBody) Lines() bool { return d.lines }

// isJSONArray reports whether a write's Content-Type is a JSON array's
// (decoderFor accepted it).
func isJSONArray(contentType string) bool {
	media, _, _ := mime.ParseMediaType(contentType)
	return contentType == "" || media == mediaJSON
}
