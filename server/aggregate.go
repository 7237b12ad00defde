package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/timetabledb/timetable/engine"
)

// aggregateParams are the parameters GET /v1/tables/{table}/aggregate
// knows.
var aggregateParams = []string{"from", "to", "series", "bucket", "fields", "fn", "fill", "filter"}

// aggregateResponse is the body of an aggregate answer.
type aggregateResponse struct {
	Buckets []engine.Bucket `json:"buckets"`
}

// aggregate answers GET /v1/tables/{table}/aggregate: fields summarised in
// UTC-aligned buckets (see engine.Aggregate). from and to default as for
// events; bucket is a duration dividing a day ("1m", "1h", "1d") or a
// calendar unit ("1w", "week:monday", "1mo", "quarter"), as
// engine.ParseBucket reads it; fields and fn are comma-separated;
// fill=true returns empty buckets too.
func (s *Server) aggregate(w http.ResponseWriter, r *http.Request, tenant string) error {
	q, err := s.parseAggregate(r.PathValue("table"), r.URL.Query())
	if err != nil {
		return err
	}
	buckets, err := s.db.Aggregate(r.Context(), tenant, q)
	if err != nil {
		return err
	}
	if buckets == nil {
		buckets = []engine.Bucket{}
	}
	body, err := json.Marshal(aggregateResponse{Buckets: buckets})
	if err != nil {
		return fmt.Errorf("encode aggregate: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
	return nil
}

// parseAggregate turns a request's parameters into an aggregate query. Its
// errors name the parameter.
func (s *Server) parseAggregate(table string, params url.Values) (engine.AggregateQuery, error) {
	q := engine.AggregateQuery{Table: table}
	if err := checkParams(params, aggregateParams); err != nil {
		return q, err
	}
	rest := url.Values{}
	for name, vs := range params {
		switch name {
		case "from", "to", "series":
			rest[name] = vs
		}
	}
	// The range and series read as they do for events.
	rq, err := s.parseQuery(table, rest)
	if err != nil {
		return q, err
	}
	q.From, q.To, q.Series = rq.From, rq.To, rq.Series
	if q.Filter, err = filterParam(params); err != nil {
		return q, err
	}
	b := params.Get("bucket")
	if b == "" {
		return q, fmt.Errorf("%w: bucket: required, e.g. 1m, 1h or 1d", ErrBadParameter)
	}
	if q.Bucket, q.Calendar, err = engine.ParseBucket(b); err != nil {
		return q, fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	for _, p := range []struct {
		name string
		into *[]string
	}{{"fields", &q.Fields}, {"fn", &q.Funcs}} {
		v := params.Get(p.name)
		if v == "" {
			return q, fmt.Errorf("%w: %s: required, comma-separated", ErrBadParameter, p.name)
		}
		*p.into = strings.Split(v, ",")
		if slices.Contains(*p.into, "") {
			return q, fmt.Errorf("%w: %s: %q holds an empty name; separate names with single commas", ErrBadParameter, p.name, v)
		}
	}
	switch fill := params.Get("fill"); fill {
	case "", "false":
	case "true":
		q.Fill = true
	default:
		return q, fmt.Errorf("%w: fill: %q is neither true nor false", ErrBadParameter, fill)
	}
	return q, nil
}
