package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/ingest"
)

// Media types of a write request's body.
const (
	mediaJSON   = api.MediaJSON
	mediaNDJSON = api.MediaNDJSON
)

// isNDJSON reports whether a write's Content-Type is NDJSON's (one event
// a line) rather than a JSON array's (also when there is none), or
// refuses one that is neither with 415.
func isNDJSON(contentType string) (bool, error) {
	if contentType == "" {
		return false, nil
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Type %q does not parse; send %s or %s", contentType, mediaJSON, mediaNDJSON)}
	}
	switch media {
	case mediaJSON:
		return false, nil
	case mediaNDJSON, "application/ndjson", "application/jsonl":
		return true, nil
	}
	return false, &httpError{status: http.StatusUnsupportedMediaType, msg: fmt.Sprintf("timetable: Content-Type %s is not supported; send a JSON array as %s, or one event per line as %s", media, mediaJSON, mediaNDJSON)}
}

// writeEvents answers POST /v1/tables/{table}/events.
func (s *Server) writeEvents(w http.ResponseWriter, r *http.Request, in *ingest.Write) error {
	ndjson, err := isNDJSON(r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	opts := s.db.Options()
	dec := ingest.JSON{Table: r.PathValue("table"), NDJSON: ndjson, Limits: opts.Limits, Now: opts.Clock.Now()}
	if dec.Limits.Precision, err = event.ParsePrecision(r.URL.Query().Get("precision")); err != nil {
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
