package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
)

// aggregateParams are the parameters GET /v1/tables/{table}/aggregate
// knows.
var aggregateParams = []string{"from", "to", "series", "bucket", "fields", "fn", "fill", "filter", "group_by", "group_limit", "group_after"}

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
	var answer api.Aggregate
	if q.GroupBy != "" {
		page, err := s.db.AggregateGroups(r.Context(), tenant, q)
		if err != nil {
			return err
		}
		answer.Groups = page.Groups
		if answer.Groups == nil {
			answer.Groups = []api.Group{}
		}
		for i, g := range answer.Groups {
			if g.Buckets == nil {
				answer.Groups[i].Buckets = []engine.Bucket{}
			}
		}
		answer.NextGroup = page.Next
	} else {
		if answer.Buckets, err = s.db.Aggregate(r.Context(), tenant, q); err != nil {
			return err
		}
		if answer.Buckets == nil {
			answer.Buckets = []engine.Bucket{}
		}
	}
	answer.Rollups = s.db.RollupUse(q)
	gaps, err := s.db.AggregateGaps(r.Context(), tenant, q)
	if err != nil {
		return err
	}
	for _, g := range gaps {
		answer.Gaps = append(answer.Gaps, api.Gap{From: g.From, To: g.To, Table: g.Table, Reason: g.Reason})
	}
	if len(answer.Gaps) > 0 {
		w.Header().Set("Timetable-Gaps", strconv.Itoa(len(answer.Gaps)))
	}
	body, err := answer.AppendJSON(make([]byte, 0, 64+len(answer.Buckets)*160))
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
	rest := url.Values{}
	if err := checkParams(params, aggregateParams...); err != nil {
		return q, err
	}
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
	}{{"fn", &q.Funcs}, {"fields", &q.Fields}} {
		v := params.Get(p.name)
		if v == "" && p.name == "fields" && slices.Equal(q.Funcs, []string{engine.FnCount}) {
			break // count alone counts events
		}
		if v == "" {
			return q, fmt.Errorf("%w: %s: required, comma-separated", ErrBadParameter, p.name)
		}
		*p.into = strings.Split(v, ",")
		if slices.Contains(*p.into, "") {
			return q, fmt.Errorf("%w: %s: %q holds an empty name; separate names with single commas", ErrBadParameter, p.name, v)
		}
	}
	q.GroupBy = params.Get("group_by")
	if v, ok := params["group_after"]; ok {
		q.GroupAfter = &v[0]
	}
	if v := params.Get("group_limit"); v != "" {
		if q.GroupLimit, err = strconv.Atoi(v); err != nil || q.GroupLimit < 1 || q.GroupLimit > engine.MaxGroupLimit {
			return q, fmt.Errorf("%w: group_limit: %q is not a number from 1 to %d", ErrBadParameter, v, engine.MaxGroupLimit)
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
