package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

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
	b, err := s.readBody(w, r, in)
	if err != nil {
		return err
	}
	defer b.release()
	var tables []lineproto.Table
	err = in.Admit(r.Context(), b.buf, true, func() ([]event.Batch, error) {
		tables, err = lineproto.Decode(b.buf, lineproto.Options{Limits: lim, Now: opts.Clock.Now()})
		batches := make([]event.Batch, len(tables))
		for i, t := range tables {
			batches[i] = t.Events
		}
		return batches, err
	})
	var many *ingest.TooManyEventsError
	if errors.As(err, &many) {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("timetable: %d lines in one request, over the limit of %d (max_events): split the batch", many.Events, many.Max)}
	}
	if err != nil {
		return s.admissionAnswer(r.Context(), in.Tenant(), err)
	}
	parts := make([]engine.TableEvents, len(tables))
	for i, t := range tables {
		parts[i] = engine.TableEvents{Table: t.Name, Events: t.Events}
	}
	if len(tables) > 1 {
		// Every table is checked before any is written, so that a
		// refusal leaves nothing written, and names the problems of
		// every table.
		var problems []lineproto.Problem
		for i, err := range in.Check(parts) {
			p, err := ingest.LineProblems(tables[i], err)
			if err != nil {
				return err
			}
			problems = append(problems, p...)
		}
		if problems != nil {
			return &lineproto.Error{Problems: sortedProblems(problems)}
		}
	}
	// One write of every table, so that the table budget counts the new
	// tables of the whole body, and a refusal writes none of it.
	written, err := in.Store(r.Context(), parts)
	if err != nil {
		var te *engine.TableError
		if errors.As(err, &te) {
			p, rerr := ingest.LineProblems(tables[te.Index], te.Err)
			if rerr != nil {
				return rerr
			}
			return &lineproto.Error{Problems: p} // nothing was written
		}
		return &writeFailure{written: written, err: err}
	}
	w.Header().Set("X-Influxdb-Version", influxVersion)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sortedProblems sorts problems by line.
func sortedProblems(p []lineproto.Problem) []lineproto.Problem {
	slices.SortFunc(p, func(a, b lineproto.Problem) int { return a.Line - b.Line })
	return p
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
