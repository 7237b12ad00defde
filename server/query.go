package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/storage"
)

// queryParams are the parameters GET /v1/tables/{table}/events knows.
var queryParams = []string{"from", "to", "series", "order", "limit", "cursor", "fields", "filter"}

// queryEvents answers GET /v1/tables/{table}/events.
func (s *Server) queryEvents(w http.ResponseWriter, r *http.Request, tenant string) error {
	q, err := s.parseQuery(r.PathValue("table"), r.URL.Query())
	if err != nil {
		return err
	}
	// The engine writes the events' JSON into the answer, an api.Page.
	page, err := s.db.QueryJSON(r.Context(), tenant, q, append(make([]byte, 0, 4096), `{"events":[`...))
	if err != nil {
		return err
	}
	b := append(page.Events, ']')
	if page.NextCursor != "" {
		b = append(b, `,"next_cursor":"`...)
		b = append(b, encodePageCursor(q.From, q.To, page.NextCursor)...)
		b = append(b, '"')
	}
	if len(page.Gaps) > 0 {
		gaps := make([]api.Gap, len(page.Gaps))
		for i, g := range page.Gaps {
			gaps[i] = api.Gap{From: g.From, To: g.To, Table: g.Table, Reason: g.Reason}
		}
		js, err := json.Marshal(gaps)
		if err != nil {
			return err
		}
		b = append(append(b, `,"gaps":`...), js...)
		w.Header().Set("Timetable-Gaps", strconv.Itoa(len(gaps)))
	}
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

// parseQuery turns a request's parameters into an engine query, with the
// defaults of the package documentation. Its errors name the parameter.
func (s *Server) parseQuery(table string, params url.Values) (engine.Query, error) {
	if err := checkParams(params, queryParams...); err != nil {
		return engine.Query{}, err
	}
	q := engine.Query{Table: table, Series: params.Get("series")}
	// One reading of the clock, for to's default and the relative times.
	now := s.db.Options().Clock.Now().UTC()
	from, hasFrom, err := timeParam(params, "from", now)
	if err != nil {
		return q, err
	}
	to, hasTo, err := timeParam(params, "to", now)
	if err != nil {
		return q, err
	}
	if c := params.Get("cursor"); c != "" {
		cFrom, cTo, ec, err := decodePageCursor(c)
		if err != nil {
			return q, err
		}
		// A cursor holds its range. A relative time sent again with it
		// (the first page's URL and &cursor=) has moved since, and
		// gives way to the range the cursor was made in.
		if !hasFrom || event.IsRelativeTime(params.Get("from")) {
			from, hasFrom = cFrom, true
		}
		if !hasTo || event.IsRelativeTime(params.Get("to")) {
			to, hasTo = cTo, true
		}
		q.Cursor = ec
	}
	if !hasTo {
		to = now
	}
	if !hasFrom {
		from = to.Add(-s.opts.QueryRange)
		if epoch := time.Unix(0, 0).UTC(); from.Before(epoch) {
			from = epoch
		}
	}
	if from.After(to) {
		return q, fmt.Errorf("%w: from %s is after to %s", ErrBadParameter, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	q.From, q.To = from, to

	switch order := params.Get("order"); order {
	case "", "asc":
	case "desc":
		q.Desc = true
	default:
		return q, fmt.Errorf("%w: order: %q is neither asc nor desc", ErrBadParameter, order)
	}
	if l, ok := params["limit"]; ok {
		n, err := strconv.Atoi(l[0])
		if err != nil || n < 1 {
			return q, fmt.Errorf("%w: limit: %q is not a positive integer", ErrBadParameter, l[0])
		}
		q.Limit = n
	}
	if f, ok := params["fields"]; ok {
		q.Fields = strings.Split(f[0], ",")
		for _, name := range q.Fields {
			if name == "" {
				return q, fmt.Errorf("%w: fields: %q holds an empty field name; separate names with single commas", ErrBadParameter, f[0])
			}
		}
	}
	if q.Filter, err = filterParam(params); err != nil {
		return q, err
	}
	return q, nil
}

// filterParam reads the filter parameter (package filter's language), or
// nil when there is none.
func filterParam(params url.Values) (*storage.Filter, error) {
	v, ok := params["filter"]
	if !ok || strings.TrimSpace(v[0]) == "" {
		return nil, nil
	}
	f, err := filter.Parse(v[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	return f, nil
}

// timeParam returns the time of a parameter, and whether it was given;
// now is what "now" and "now-1h" count from (event.ParseTimeAt).
func timeParam(params url.Values, name string, now time.Time) (time.Time, bool, error) {
	v, ok := params[name]
	if !ok || v[0] == "" {
		return time.Time{}, false, nil
	}
	t, err := event.ParseTimeAt(v[0], now)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%w: %s: %q is neither RFC 3339 (2017-04-10T12:00:00.123Z), integer Unix milliseconds nor now, now-1h, now-7d", ErrBadParameter, name, v[0])
	}
	if t.Before(time.Unix(0, 0)) {
		return time.Time{}, false, fmt.Errorf("%w: %s: %s is before 1970-01-01T00:00:00Z, where every stored time begins", ErrBadParameter, name, t.Format(time.RFC3339Nano))
	}
	return t, true, nil
}
