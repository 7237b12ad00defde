package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/influxql"
)

const routeInfluxQuery = api.PathInfluxQuery

// maxQueryForm bounds the form of a POST /query, the statements included.
const maxQueryForm = 1 << 20

// influxQuery answers GET and POST /query, InfluxDB 1.x's query endpoint:
// the statements of q (package influxql), each answered in its own
// result, its error in it. db names the tenant's data whatever it is
// (a statement without it names a database, or answers "database name
// required": influxql's database.go); rp is ignored; epoch writes times as integers of its unit; chunked
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
	w.Header().Set("Content-Type", "application/json")
	a := &influxAnswer{w: w, pretty: r.Form.Get("pretty") == "true", chunked: r.Form.Get("chunked") == "true", mark: -1}
	if a.chunked {
		a.size, _ = strconv.Atoi(r.Form.Get("chunk_size"))
		if a.size <= 0 {
			a.size = 10000
		}
	}
	// The answers take their memory from the engine's query budget, under
	// the tenant's query partitions (partitioned), as its reads of every
	// series do.
	hold := s.db.QueryHold(r.Context(), tenant)
	defer hold.Release()
	opts := influxql.Options{Now: s.db.Options().Clock.Now(), Database: r.Form.Get("db"), Epoch: epoch, Series: s.influxSeries, Budget: hold, CPU: s.opts.CPU}
	a.start()
	if err := influxql.Stream(r.Context(), s.db, tenant, stmts, opts, a); err != nil {
		if !a.sent {
			return err
		}
		return nil // the client went away, or the answer is cut short: the status is sent
	}
	return a.finish()
}

// answerBuffer is what a /query answer keeps before it sends its first
// bytes, unless chunked: a query refused before, or whose store fails
// before, is answered with its status instead of 200, and a statement
// that fails before is answered with its error alone, as InfluxDB
// answers. A chunked answer keeps nothing past a document: its client
// asked for the documents as they are built.
const answerBuffer = 64 << 10

// influxAnswer writes a /query answer as the executor builds it
// (influxql.Answer), series by series: InfluxDB's JSON, one document, or
// with chunked a document a line for each result and each chunk_size rows
// of a series, every part but a statement's last marked partial. It
// keeps the answer in buf until answerBuffer bytes, then sends them; a
// chunked answer sends and flushes each document once it is complete, as
// InfluxDB does. It holds back a series' last chunk, or a statement's
// series, no longer than to learn whether it is the statement's last.
type influxAnswer struct {
	w       http.ResponseWriter
	pretty  bool
	chunked bool
	size    int // chunk_size
	buf     bytes.Buffer
	// sent is set once bytes went to w: the status, 200, is sent.
	sent bool
	// n is the statements begun; series the series of the current one.
	n, series int
	// mark is where the current statement's result starts in buf, or -1
	// once some of it has been sent.
	mark int
	// last is the last chunk of the statement's series before (chunked),
	// held until the next series or the statement's end.
	last *api.InfluxQLSeries
}

// Indents of the pretty answer, as json.MarshalIndent writes it with
// four spaces: the results, a result's fields, its series' elements.
const (
	indentResults = "\n    "
	indentResult  = "\n        "
	indentField   = "\n            "
	indentSeries  = "                "
)

// start writes the answer's opening.
func (a *influxAnswer) start() {
	if a.chunked {
		return
	}
	a.buf.WriteString(a.text(`{"results":[`, `{`+indentResults+`"results": [`))
}

// text picks the compact or the pretty form.
func (a *influxAnswer) text(compact, pretty string) string {
	if a.pretty {
		return pretty
	}
	return compact
}

// begin opens statement i's result.
func (a *influxAnswer) begin(i int) {
	if a.n > i {
		return
	}
	a.n, a.series, a.mark, a.last = i+1, 0, a.buf.Len(), nil
	if a.chunked {
		return
	}
	if i > 0 {
		a.buf.WriteByte(',')
	}
	a.buf.WriteString(a.text(`{"statement_id":`, indentResult+`{`+indentField+`"statement_id": `))
	a.buf.WriteString(strconv.Itoa(i))
}

// Series writes one series of statement i.
func (a *influxAnswer) Series(i int, s api.InfluxQLSeries) error {
	a.begin(i)
	a.series++
	if a.chunked {
		if a.last != nil {
			if err := a.document(api.InfluxQLResult{StatementID: i, Series: []api.InfluxQLSeries{*a.last}, Partial: true}); err != nil {
				return err
			}
			a.last = nil
		}
		values := s.Values
		for {
			part := s
			part.Values = values[:min(a.size, len(values))]
			values = values[len(part.Values):]
			if len(values) == 0 {
				a.last = &part
				return nil
			}
			part.Partial = true
			if err := a.document(api.InfluxQLResult{StatementID: i, Series: []api.InfluxQLSeries{part}, Partial: true}); err != nil {
				return err
			}
		}
	}
	if a.series == 1 {
		a.buf.WriteString(a.text(`,"series":[`, `,`+indentField+`"series": [`))
	} else {
		a.buf.WriteByte(',')
	}
	var b []byte
	var err error
	if a.pretty {
		a.buf.WriteString("\n" + indentSeries)
		b, err = json.MarshalIndent(s, indentSeries, "    ")
	} else {
		b, err = json.Marshal(s)
	}
	if err != nil {
		return err
	}
	a.buf.Write(b)
	return a.spill()
}

// End ends statement i's result. The error of a store that fails or of
// the query budget (a 5xx or a 429, which a retry may cure) fails the
// whole request, as on every other route, while nothing has been sent;
// others are the statement's, in its result.
func (a *influxAnswer) End(i int, err error) error {
	a.begin(i)
	if err != nil && !a.sent && failsRequest(err) {
		return err
	}
	if err != nil && a.mark >= 0 {
		// Nothing of the statement has been sent: its result is its
		// error alone.
		a.buf.Truncate(a.mark)
		a.n, a.series, a.last = i, 0, nil
		a.begin(i)
	}
	if a.chunked {
		res := api.InfluxQLResult{StatementID: i}
		if a.last != nil {
			res.Series = []api.InfluxQLSeries{*a.last}
			res.Partial = err != nil
			a.last = nil
			if err := a.document(res); err != nil {
				return err
			}
			res = api.InfluxQLResult{StatementID: i}
		}
		if err != nil || a.series == 0 {
			if err != nil {
				res.Error = err.Error()
			}
			return a.document(res)
		}
		return nil
	}
	if a.series > 0 {
		a.buf.WriteString(a.text(`]`, indentField+`]`))
	}
	if err != nil {
		msg, jerr := json.Marshal(err.Error())
		if jerr != nil {
			return jerr
		}
		a.buf.WriteString(a.text(`,"error":`, `,`+indentField+`"error": `))
		a.buf.Write(msg)
	}
	a.buf.WriteString(a.text(`}`, indentResult+`}`))
	return a.spill()
}

// failsRequest reports whether a statement's error fails the request: a
// store unavailable, a server failing, or the query budget without room.
func failsRequest(err error) bool {
	var ee *influxql.EngineError
	if errors.As(err, &ee) && (status(ee.Err) >= 500 || status(ee.Err) == http.StatusTooManyRequests) {
		return true
	}
	return errors.Is(err, admission.ErrLimited) || errors.Is(err, engine.ErrBusy)
}

// document writes one result as a document of its own line (chunked).
func (a *influxAnswer) document(res api.InfluxQLResult) error {
	v := api.InfluxQLResponse{Results: []api.InfluxQLResult{res}}
	var b []byte
	var err error
	if a.pretty {
		b, err = json.MarshalIndent(v, "", "    ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	a.buf.Write(b)
	a.buf.WriteByte('\n')
	return a.spill()
}

// spill sends what buf holds once it is answerBuffer or more, and a
// chunked answer's documents at once, each as it is complete.
func (a *influxAnswer) spill() error {
	if a.buf.Len() < answerBuffer && !a.chunked {
		return nil
	}
	return a.send()
}

// send sends what buf holds, flushed for a chunked answer's reader
// through every writer the server wraps it in (each has Unwrap, which
// http.ResponseController follows).
func (a *influxAnswer) send() error {
	a.sent, a.mark = true, -1
	_, err := a.w.Write(a.buf.Bytes())
	a.buf.Reset()
	if err == nil && a.chunked {
		if err = http.NewResponseController(a.w).Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil // a writer that cannot flush sends as it fills
		}
	}
	return err
}

// finish writes the answer's end and sends the rest.
func (a *influxAnswer) finish() error {
	if !a.chunked {
		if a.n == 0 {
			a.buf.Reset()
			a.buf.WriteString(a.text(`{"results":[]}`, `{`+indentResults+`"results": []`+"\n}"))
		} else {
			a.buf.WriteString(a.text(`]}`, indentResults+`]`+"\n}"))
		}
		a.buf.WriteByte('\n')
	}
	_ = a.send() // an error is the client gone: the status is sent
	return nil
}
