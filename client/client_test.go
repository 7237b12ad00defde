package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
)

// A 503 with Retry-After is sent again, within Attempts; the last
// refusal is returned as an *Error.
func TestRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "Bearer k", r.Header.Get("Authorization"))
		if calls.Add(1) < 3 {
			w.Header().Set(api.RetryAfter, "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"timetable: store throttled; retry the request"}`))
			return
		}
		_, _ = w.Write([]byte(`{"tables":[{"name":"cars","family":"events"}]}`))
	}))
	defer srv.Close()
	opts := &client.Options{MaxRetryWait: time.Millisecond}
	c, err := client.New(srv.URL+"/", "k", opts)
	require.NoError(t, err)
	tables, err := c.Tables(context.Background())
	require.NoError(t, err)
	require.Equal(t, []api.LogicalTable{{Name: "cars", Family: "events"}}, tables)
	require.EqualValues(t, 3, calls.Load())

	calls.Store(0)
	opts.Attempts = 2
	c, err = client.New(srv.URL, "k", opts)
	require.NoError(t, err)
	_, err = c.Tables(context.Background())
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, &client.Error{Status: 503, Code: api.CodeUnavailable, Message: "timetable: store throttled; retry the request", RetryAfter: time.Second,
		Body: api.ErrorBody{Error: "timetable: store throttled; retry the request"}}, e)
	require.EqualValues(t, 2, calls.Load())
}

// An answer that is not the API's JSON is an *Error naming the status and
// quoting the body; an unreachable server is net/http's *url.Error.
func TestForeignAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	c, err := client.New(srv.URL, "k", nil)
	require.NoError(t, err)
	_, err = c.Keys(context.Background(), "a/b")
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, api.CodeInternal, e.Code)
	require.Equal(t, "timetable: the server at "+srv.URL+" answered 502 Bad Gateway: bad gateway", e.Message)
	srv.Close()

	_, err = c.Tables(context.Background())
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	require.False(t, errors.As(err, &e))
}

func TestNewRefuses(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x", "http://"} {
		_, err := client.New(u, "k", nil)
		require.Error(t, err, u)
	}
	_, err := client.New("http://x", "", nil)
	require.Error(t, err)
	_, err = client.New("http://x", "k", &client.Options{Attempts: -1})
	require.Error(t, err)
}
