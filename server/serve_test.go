package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/pebblestore"
	"github.com/timetabledb/timetable/tenant"
)

func TestServeFinishesRequestsInFlight(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(now)
	store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer store.Close()
	reg := prometheus.NewRegistry()
	db, err := engine.Open(ctx, store, engine.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	defer db.Close()
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	key, err := tenants.Add(ctx, "acme", now)
	require.NoError(t, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	srv, err := server.New(db, server.Options{TenantDirectory: tenants, Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	go func() { served <- srv.Serve(serveCtx, ln) }()

	body := ndjson(now.Add(-time.Hour), "car-17", 50)
	conn := startSlowWrite(t, addr, key, body)
	waitInFlight(t, addr, 1)

	stop()
	waitRefused(t, addr)
	// The server no longer accepts connections, and still reads the
	// request it began.
	status, answer := finishSlowWrite(t, conn, body)
	require.Equal(t, http.StatusOK, status, "answer: %s", answer)
	require.JSONEq(t, `{"written": 50}`, answer)
	require.NoError(t, <-served)

	page, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: now.Add(-2 * time.Hour), To: now})
	require.NoError(t, err)
	require.Len(t, page.Events, 50)
}

// startSlowWrite sends the headers and the first half of a write request
// of body, and returns the connection.
func startSlowWrite(t *testing.T, addr, key, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /v1/tables/a_table/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n%s",
		addr, key, len(body), body[:len(body)/2])
	require.NoError(t, err)
	return conn
}

// finishSlowWrite sends the rest of the body and returns the answer.
func finishSlowWrite(t *testing.T, conn net.Conn, body string) (int, string) {
	t.Helper()
	_, err := io.WriteString(conn, body[len(body)/2:])
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// waitInFlight waits until the server at addr says n requests to /v1 are
// in flight.
func waitInFlight(t *testing.T, addr string, n int) {
	t.Helper()
	want := fmt.Sprintf("\ntimetable_http_requests_in_flight %d\n", n)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	require.Eventually(t, func() bool {
		res, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return err == nil && strings.Contains(string(b), want)
	}, time.Minute, 5*time.Millisecond, "the server never had %d requests in flight", n)
}

// waitRefused waits until addr refuses connections.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	}, time.Minute, 5*time.Millisecond, "the server never stopped accepting connections")
}
