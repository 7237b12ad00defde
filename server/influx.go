package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
	"github.com/timetabledb/timetable/ingest"
)

// influxVersion is the InfluxDB version timetable answers as: the line
// protocol and write API it speaks.
const influxVersion = "1.8.10"

// Route patterns of the InfluxDB endpoints.
const (
	routeInfluxWrite   = api.PathInfluxWrite
	routeInfluxV2Write = api.PathInfluxV2Write
	routeInfluxPing    = api.PathInfluxPing
)

// Parameters of the write endpoints; those that name a database, a
// retention policy or an organization are accepted and ignored.
var (
	influxV1Params = []string{"db", "rp", "precision", "consistency", "u", "p"}
	influxV2Params = []string{"bucket", "org", "orgID", "precision"}
)

// influxWrite answers a line protocol write whose parameters are among
// params: InfluxDB 1.x's or 2.x's.
func (s *Server) influxWrite(params []string) writeEndpoint {
	return func(w http.ResponseWriter, r *http.Request, in *ingest.Write) error {
		return s.writeLines(w, r, in, params)
	}
}

// writeLines writes a line protocol body.
func (s *Server) writeLines(w http.ResponseWriter, r *http.Request, in *ingest.Write, params []string) error {
	q := r.URL.Query()
	if err := checkParams(q, params...); err != nil {
		return err
	}
	opts := s.db.Options()
	lim := opts.Limits
	var err error
	if lim.Precision, err = event.ParsePrecision(q.Get("precision")); err != nil {
		return fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	body, declared, err := s.bodyReader(w, r)
	if err != nil {
		return err
	}
	dec := &ingest.LineProtocol{Options: lineproto.Options{Limits: lim, Now: opts.Clock.Now()}}
	// One write of every table, so that the table budget counts the new
	// tables of the whole body, and a refusal writes none of it; the
	// tables are checked together first (ingest.LineProtocol.Refused).
	written, err := in.Run(r.Context(), body, declared, dec)
	var failed *ingest.StoreError
	if errors.As(err, &failed) {
		var te *engine.TableError
		if errors.As(failed.Err, &te) {
			errs := make([]error, len(dec.Tables))
			errs[te.Index] = te.Err
			return dec.Refused(errs) // nothing was written
		}
		return &writeFailure{written: written, err: failed.Err}
	}
	if err != nil {
		return s.ingestAnswer(r.Context(), in.Tenant(), err, "lines")
	}
	w.Header().Set("X-Influxdb-Version", influxVersion)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// influxPing answers GET /ping as InfluxDB does: 204 with the version in
// a header, or 200 and {"version": ...} with verbose=true. It asks
// nothing of the store (GET /readyz does).
func (s *Server) influxPing(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Influxdb-Version", influxVersion)
	w.Header().Set("X-Influxdb-Build", "timetable")
	if v := r.URL.Query().Get("verbose"); v == "true" || v == "1" {
		writeJSON(w, http.StatusOK, api.InfluxPing{Version: influxVersion})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type influxV2Key struct{}

// influxV2 marks the requests of InfluxDB 2.x's endpoint, whose error
// answers also carry its code and message (isInfluxV2).
func influxV2(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), influxV2Key{}, true)))
	})
}

// isInfluxV2 reports whether influxV2 marked r.
func isInfluxV2(r *http.Request) bool {
	v, _ := r.Context().Value(influxV2Key{}).(bool)
	return v
}
