package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/influxql"
)

const routeInfluxQuery = api.PathInfluxQuery

// maxQueryForm bounds the form of a POST /query, the statements included.
const maxQueryForm = 1 << 20

// influxQuery answers GET and POST /query, InfluxDB 1.x's query endpoint:
// the statements of q (package influxql), each answered in its own
// result, its error in it. db names the tenant's data whatever it is;
// rp is ignored; epoch writes times as integers of its unit; chunked
// writes each result, and each chunk_size rows of a series, as a JSON
// document of its own line; pretty indents.
func (s *Server) influxQuery(w http.ResponseWriter, r *http.Request, tenant string) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxQueryForm)
	if err := r.ParseForm(); err != nil {
		return &httpError{status: http.StatusBadRequest, msg: "timetable: read the form of /query: " + err.Error()}
	}
	w.Header().Set("X-Influxdb-Version", influxVersion)
	q := r.Form.Get("q")
	if strings.TrimSpace(q) == "" {
		return &httpError{status: http.StatusBadRequest, msg: `missing required parameter "q"`}
	}
	epoch := r.Form.Get("epoch")
	switch epoch {
	case "", "ns", "n", "u", "µ", "us", "ms", "s", "m", "h":
	default:
		return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: epoch %q: use ns, u, µ, ms, s, m or h", epoch)}
	}
	var params map[string]any
	if p := r.Form.Get("params"); p != "" {
		if err := json.Unmarshal([]byte(p), &params); err != nil {
			return &httpError{status: http.StatusBadRequest, msg: "error parsing query parameters: " + err.Error()}
		}
	}
	stmts, err := influxql.Parse(q, params)
	if err != nil {
		return &httpError{status: http.StatusBadRequest, msg: "error parsing query: " + err.Error()}
	}
	opts := influxql.Options{Now: s.db.Options().Clock.Now(), Database: r.Form.Get("db"), Epoch: epoch, Series: s.influxSeries, CPU: s.db.Options().CPU}
	results, errs := influxql.Execute(r.Context(), s.db, tenant, stmts, opts)
	for _, err := range errs {
		// A store unavailable, or a server failing, fails the request
		// as every other route does (503 with Retry-After, or 500),
		// rather than answering 200 with the cause in a result.
		var ee *influxql.EngineError
		if errors.As(err, &ee) && (status(ee.Err) >= 500 || status(ee.Err) == http.StatusTooManyRequests) {
			return ee.Err
		}
	}
	pretty := r.Form.Get("pretty") == "true"
	w.Header().Set("Content-Type", "application/json")
	if r.Form.Get("chunked") != "true" {
		return writeInfluxJSON(w, api.InfluxQLResponse{Results: results}, pretty)
	}
	size, _ := strconv.Atoi(r.Form.Get("chunk_size"))
	if size <= 0 {
		size = 10000
	}
	for _, chunk := range chunks(results, size) {
		if err := writeInfluxJSON(w, api.InfluxQLResponse{Results: []api.InfluxQLResult{chunk}}, pretty); err != nil {
			return nil // the client went away; the status is sent
		}
	}
	return nil
}

// chunks splits results as InfluxDB's chunked answers do: a result per
// document, a series cut every size rows, every part but a statement's
// last marked partial.
func chunks(results []api.InfluxQLResult, size int) []api.InfluxQLResult {
	var out []api.InfluxQLResult
	for _, res := range results {
		if res.Error != "" || len(res.Series) == 0 {
			out = append(out, res)
			continue
		}
		for i, s := range res.Series {
			values := s.Values
			for {
				part := s
				part.Values = values[:min(size, len(values))]
				values = values[len(part.Values):]
				part.Partial = len(values) > 0 || s.Partial
				out = append(out, api.InfluxQLResult{StatementID: res.StatementID, Series: []api.InfluxQLSeries{part},
					Partial: len(values) > 0 || i < len(res.Series)-1})
				if len(values) == 0 {
					break
				}
			}
		}
	}
	return out
}

// writeInfluxJSON writes one JSON document and a newline.
func writeInfluxJSON(w http.ResponseWriter, v any, pretty bool) error {
	var b []byte
	var err error
	if pretty {
		b, err = json.MarshalIndent(v, "", "    ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}
