package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

func TestFail(t *testing.T) {
	partial := &writeFailure{written: 3, err: &engine.WriteError{Unwritten: []int{1, 4}, Err: fmt.Errorf("write to table %q: %w", "tt_events_1", storage.ErrThrottled)}}
	tests := []struct {
		name       string
		err        error
		status     int
		body       string
		retryAfter string
	}{
		{"refused events", &event.BatchError{Problems: []event.Problem{{Index: 2, Reason: "time: missing"}}}, 400,
			`{"error":"timetable: invalid event: 1 bad event: event 2: time: missing","problems":[{"index":2,"reason":"time: missing"}]}`, ""},
		{"malformed body", fmt.Errorf("%w: not an array", event.ErrMalformedBody), 400, `{"error":"timetable: malformed request body: not an array"}`, ""},
		{"bad name", fmt.Errorf("%w: table %q", engine.ErrBadTableName, "a#b"), 400, `{"error":"timetable: bad name: table \"a#b\""}`, ""},
		{"bad cursor", engine.ErrBadCursor, 400, `{"error":"timetable: bad cursor"}`, ""},
		{"unknown table", engine.ErrUnknownTable, 404, `{"error":"timetable: logical table not found"}`, ""},
		{"too large", &http.MaxBytesError{Limit: 10}, 413, `{"error":"http: request body too large"}`, ""},
		{"throttled part-way", partial, 503,
			`{"error":"timetable: throttled by the store; retry the request (request id r1)","written":3,"unwritten":[1,4]}`, "1"},
		{"store unavailable part-way", &writeFailure{written: 2, err: &engine.WriteError{Unwritten: []int{0}, Err: fmt.Errorf("write: %w", storage.ErrUnavailable)}}, 503,
			`{"error":"timetable: store unavailable; retry the request (request id r1)","written":2,"unwritten":[0]}`, "1"},
		{"authentication with the store down", fmt.Errorf("authenticate: %w", fmt.Errorf("get item: %w: dial tcp: connection refused", storage.ErrUnavailable)), 503,
			`{"error":"timetable: store unavailable; retry the request (request id r1)"}`, "1"},
		{"engine closing", fmt.Errorf("query: %w", engine.ErrClosed), 503, `{"error":"timetable: engine closed; retry the request (request id r1)"}`, "1"},
		{"store closing", fmt.Errorf("query: %w", storage.ErrClosed), 503, `{"error":"timetable: store closed; retry the request (request id r1)"}`, "1"},
		{"table quota reached", &writeFailure{written: 0, err: &engine.WriteError{Unwritten: []int{0}, Err: fmt.Errorf("create table: %w", storage.ErrTableQuota)}}, 503,
			`{"error":"timetable: the account's table quota is reached; retry the request (request id r1)","written":0,"unwritten":[0]}`, "1"},
		{"store refusing an item", &writeFailure{written: 1, err: &engine.WriteError{Unwritten: []int{0}, Err: &storage.BatchWriteError{Table: "tt_events_1", Unwritten: []int{0}, Err: fmt.Errorf("item 0: %w", storage.InvalidError{Path: "x", Reason: "nested deeper than 32 levels"})}}}, 400,
			`{"error":"timetable: invalid item: x: nested deeper than 32 levels; the request will be refused again (request id r1)","written":1,"unwritten":[0]}`, ""},
		{"store refusing a request", fmt.Errorf("query table %q: %w: ValidationException", "tt_events_1", storage.ErrInvalid), 400,
			`{"error":"timetable: invalid item; the request will be refused again (request id r1)"}`, ""},
		{"damaged archive", fmt.Errorf("query table %q: cold tier: %w: the archive of table tt_events_1 (generation 1, period 2017-04-09T00:00:00Z to 2017-04-16T00:00:00Z): events/x.parquet is missing", "tt_events_1", storage.ErrDamaged), 409,
			`{"error":"query table \"tt_events_1\": cold tier: timetable: stored data damaged: the archive of table tt_events_1 (generation 1, period 2017-04-09T00:00:00Z to 2017-04-16T00:00:00Z): events/x.parquet is missing"}`, ""},
		{"store failure", &writeFailure{written: 0, err: errors.New("disk on fire")}, 500,
			`{"error":"timetable: internal error, the request may be retried whole (request id r1)","written":0}`, ""},
		{"authentication failure of the store", fmt.Errorf("authenticate: %w", errors.New("io error")), 500,
			`{"error":"timetable: internal error, the request may be retried whole (request id r1)"}`, ""},
	}
	s := &Server{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &requestInfo{reqID: "r1"}
			r := httptest.NewRequestWithContext(context.WithValue(t.Context(), infoKey{}, info), "GET", "/", nil)
			w := httptest.NewRecorder()
			s.fail(w, r, tt.err)
			require.Equal(t, tt.status, w.Code)
			require.JSONEq(t, tt.body, w.Body.String())
			require.Equal(t, tt.retryAfter, w.Header().Get("Retry-After"))
			require.Equal(t, tt.err, info.err, "the request log gets the cause")
		})
	}
}

func TestFailUnauthorized(t *testing.T) {
	s := &Server{}
	w := httptest.NewRecorder()
	s.fail(w, httptest.NewRequest("GET", "/", nil), tenant.ErrUnknownKey)
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, `Bearer realm="timetable", error="invalid_token"`, w.Header().Get("WWW-Authenticate"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	require.Equal(t, "timetable: unknown API key", body["error"])
}

func TestFailClientGone(t *testing.T) {
	s := &Server{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	info := &requestInfo{reqID: "r1"}
	r := httptest.NewRequestWithContext(context.WithValue(ctx, infoKey{}, info), "GET", "/", nil)
	w := httptest.NewRecorder()
	s.fail(w, r, fmt.Errorf("query: %w", context.Canceled))
	require.Empty(t, w.Body.String(), "nobody reads the answer")
	require.ErrorIs(t, info.err, context.Canceled)
}

func TestNotReadyReason(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("ping: %w", engine.ErrClosed), "server shutting down"},
		{fmt.Errorf("ping: %w", storage.ErrUnavailable), "store unavailable"},
		{fmt.Errorf("ping: %w", storage.ErrThrottled), "store throttling"},
		{fmt.Errorf("ping: %w", context.DeadlineExceeded), "store did not answer within 2s"},
		{fmt.Errorf("ping: %w", storage.ErrTableNotFound), "meta table not found"},
		{errors.New("disk on fire"), "store error"},
	} {
		require.Equal(t, tt.want, notReadyReason(tt.err, 2*time.Second), "%v", tt.err)
	}
}
