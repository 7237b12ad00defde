package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// ErrBadParameter marks a query parameter the server cannot use: unknown,
// repeated, or of the wrong form. The message names the parameter.
var ErrBadParameter = errors.New("timetable: bad query parameter")

// httpError is an error the server itself decides the status of.
type httpError struct {
	status int
	msg    string
	// retryAfter is the Retry-After of a 429.
	retryAfter time.Duration
}

func (e *httpError) Error() string { return e.msg }

// retryAfterSeconds is the Retry-After of a 503.
const retryAfterSeconds = "1"

// retryLater returns the sentinel in err that says the same request may
// succeed later, or nil: the store throttled it or could not be reached,
// the query budget had no room, the engine or the store is closing
// (this server is shutting down; another, or this one restarted, will
// serve), or a new table was refused for the account's table quota (the
// same request succeeds once the operator raises the quota or retention
// frees tables: no fault of the request's). Those answer 503 with Retry-After; the sentinel is all the
// client is told.
func retryLater(err error) error {
	for _, s := range []error{storage.ErrThrottled, storage.ErrUnavailable, engine.ErrBusy, engine.ErrClosed, storage.ErrClosed, storage.ErrTableQuota} {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// status returns the HTTP status an error answers with. A 5xx is an
// error a retry of the same request may cure; a request that can never
// succeed is a 4xx, among them one the store refuses as invalid
// (storage.ErrInvalid): the engine refuses what a store would before
// writing anything, so that is a store and the engine disagreeing, but
// the same request would be refused again.
func status(err error) int {
	var he *httpError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.As(err, &tooLarge), errors.Is(err, admission.ErrTooLarge), errors.Is(err, event.ErrDecodedTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, tenant.ErrUnknownKey), errors.Is(err, errBadAdminToken):
		return http.StatusUnauthorized
	case errors.Is(err, engine.ErrUnknownTable),
		errors.Is(err, tenant.ErrNotFound),
		errors.Is(err, tenant.ErrNoSuchKey):
		return http.StatusNotFound
	case errors.Is(err, tenant.ErrExists), errors.Is(err, tenant.ErrRotated):
		return http.StatusConflict
	case errors.Is(err, engine.ErrTableRate), errors.Is(err, admission.ErrLimited):
		return http.StatusTooManyRequests
	case errors.Is(err, engine.ErrNearTableQuota):
		// No retry cures it: the operator raises the quota, or keeps
		// fewer tables.
		return http.StatusForbidden
	case errors.Is(err, storage.ErrDamaged):
		// An archive the read needs does not match its manifest: no retry
		// cures it, an operator restores the file (the message names it).
		return http.StatusConflict
	case errors.Is(err, event.ErrInvalidEvent),
		errors.Is(err, event.ErrMalformedBody),
		errors.Is(err, engine.ErrBadTableName),
		errors.Is(err, engine.ErrBadQuery),
		errors.Is(err, engine.ErrBadCursor),
		errors.Is(err, engine.ErrTooManyNewTables),
		errors.Is(err, ErrBadParameter),
		errors.Is(err, tenant.ErrBadName),
		errors.Is(err, tenant.ErrBadScope),
		errors.Is(err, tenant.ErrBadGrace),
		errors.Is(err, api.ErrBadTenantLimits),
		errors.Is(err, storage.ErrInvalid):
		return http.StatusBadRequest
	case retryLater(err) != nil:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// fail answers a request with err as a JSON error, and records err for the
// request log.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := status(err)
	info := infoOf(r)
	if info != nil {
		info.err = err
	}
	if code >= 500 && r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		// The client went away: nobody reads the answer, and the request
		// log says what happened.
		return
	}
	body := api.ErrorBody{Error: err.Error()}
	var be *event.BatchError
	if errors.As(err, &be) {
		body.Problems = make([]api.Problem, len(be.Problems))
		for i, p := range be.Problems {
			body.Problems[i] = api.Problem(p)
		}
	}
	var le *lineproto.Error
	if errors.As(err, &le) {
		body.Lines = make([]api.LineProblem, len(le.Problems))
		for i, p := range le.Problems {
			body.Lines[i] = api.LineProblem(p)
		}
	}
	var wf *writeFailure
	if errors.As(err, &wf) {
		body.Written = &wf.written
		var we *engine.WriteError
		if errors.As(err, &we) {
			body.Unwritten = we.Unwritten
		}
	}
	switch {
	case code == http.StatusTooManyRequests:
		// Every 429 says when to come back: at least a second.
		var re *engine.TableRateError
		var he *httpError
		var le *admission.LimitError
		var wait time.Duration
		switch {
		case errors.As(err, &re):
			wait = re.RetryAfter
		case errors.As(err, &he):
			wait = he.retryAfter
		case errors.As(err, &le):
			wait = le.RetryAfter
		}
		w.Header().Set(api.RetryAfter, retryAfterHeader(wait))
	case code == http.StatusServiceUnavailable:
		w.Header().Set(api.RetryAfter, retryAfterSeconds)
		var he *httpError
		if errors.As(err, &he) {
			break // the server's own answer, a full body budget
		}
		body.Error = fmt.Sprintf("%s; retry the request (request id %s)", retryLater(err), info.id())
	case code >= 500:
		// The cause is in the log; it may name tables and hosts the
		// client has no business knowing.
		body.Error = fmt.Sprintf("timetable: internal error, the request may be retried whole (request id %s)", info.id())
	case errors.Is(err, storage.ErrInvalid) && !errors.Is(err, event.ErrInvalidEvent):
		// The store's reason, without the tables the error names.
		body.Error = fmt.Sprintf("%s; the request will be refused again (request id %s)", storage.ErrInvalid, info.id())
		var ie storage.InvalidError
		if errors.As(err, &ie) {
			body.Error = fmt.Sprintf("%s; the request will be refused again (request id %s)", ie, info.id())
		}
	case code == http.StatusUnauthorized:
		challenge := `Bearer realm="timetable"`
		if errors.Is(err, tenant.ErrUnknownKey) || errors.Is(err, errBadAdminToken) {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
	}
	if isInfluxV2(r) {
		body.Code, body.Message = api.CodeOf(code), body.Error
	}
	writeJSON(w, code, body)
}

// writeFailure is a write that failed, with the count of events it
// stored all the same.
type writeFailure struct {
	written int
	err     error
}

func (e *writeFailure) Error() string { return e.err.Error() }
func (e *writeFailure) Unwrap() error { return e.err }

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the server's own types are written here; they marshal.
		panic(fmt.Sprintf("timetable: server: encode answer: %v", err))
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
