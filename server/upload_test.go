package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/server"
)

// A write's key is checked when the request starts and again once its
// body has arrived: a key revoked while the body uploads writes nothing,
// and the answer is 401 with the JSON error.
func TestAKeyRevokedDuringItsUploadWritesNothing(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken})
	ctx := context.Background()
	body := ndjson(now.Add(-time.Hour), "a", 100)
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	c, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/tables/t/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n", u.Host, f.acme, len(body))
	_, err = io.WriteString(c, body[:len(body)/2])
	require.NoError(t, err)
	// The request is in: its body holds part of the body budget.
	require.Eventually(t, func() bool {
		res := f.do("GET", "/v1/admin/tenants/acme/limits", adminToken, nil)
		var l api.Limits
		return json.Unmarshal(res.body, &l) == nil && l.Usage.BodyBytes > 0
	}, 10*time.Second, 5*time.Millisecond, "the upload has started")

	keys, err := f.tenants.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	_, err = f.tenants.Revoke(ctx, "acme", keys[0].ID, now)
	require.NoError(t, err)
	_, err = io.WriteString(c, body[len(body)/2:])
	require.NoError(t, err)

	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "body: %s", answer)
	var e api.ErrorBody
	require.NoError(t, json.Unmarshal(answer, &e), "a JSON error: %s", answer)
	require.Contains(t, e.Error, "revoked")
	_, err = f.db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "t", From: now.Add(-2 * time.Hour), To: now, Bucket: time.Hour, Funcs: []string{"count"}})
	require.ErrorIs(t, err, engine.ErrUnknownTable, "nothing written, not even the table")
}

// Go's HTTP server refuses a Content-Length it cannot parse (negative,
// or past 63 bits) before any handler runs, with a plain-text 400 and
// the connection closed: net/http has no hook for that answer
// (docs/api.md says so). A Content-Length that parses but is over the
// limit is the server's own 413, with the JSON error.
func TestAnAbsurdContentLength(t *testing.T) {
	f := newFixture(t, server.Options{})
	u, err := url.Parse(f.url)
	require.NoError(t, err)
	send := func(length string) (*http.Response, string) {
		t.Helper()
		c, err := net.Dial("tcp", u.Host)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /v1/tables/t/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %s\r\n\r\n{}", u.Host, f.acme, length)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		res.Body.Close()
		return res, string(b)
	}
	for _, length := range []string{"-1", "-99999", "99999999999999999999", "1e9", "2, 3"} {
		res, body := send(length)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "Content-Length %s: %s", length, body)
		require.True(t, res.Close, "the connection is closed")
		require.True(t, strings.HasPrefix(body, "400 Bad Request"), "Go's own answer: %q", body)
	}
	res, body := send("999999999999999")
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "body: %s", body)
	var e api.ErrorBody
	require.NoError(t, json.Unmarshal([]byte(body), &e), "a JSON error: %s", body)
	require.Contains(t, e.Error, "over the limit")
}

// TestAKeyRevokedDuringItsUploadOnDynamoDB checks the key again before
// the write on the DynamoDB backend.
func TestAKeyRevokedDuringItsUploadOnDynamoDB(t *testing.T) {
	dynamoEndpoint(t)
	backend = backends.Dynamo()
	defer func() { backend = pebble() }()
	TestAKeyRevokedDuringItsUploadWritesNothing(t)
}
