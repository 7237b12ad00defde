package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestServeShutsDownGracefully(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store := "--store=pebble:" + dir
	key := strings.TrimSpace(mustRun(t, "", "tenant", "add", "acme", store).stdout)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncWriter
	addr, served := startServe(ctx, t, &globals{storeSpec: "pebble:" + dir}, serveOptions{shutdownTimeout: time.Minute}, &logs)

	// A write whose body arrives slowly is in flight when the signal
	// comes.
	body := ndjsonLines(40)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/tables/a_table/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n%s",
		addr, key, len(body), body[:len(body)/2])
	require.NoError(t, err)
	waitInFlight(t, addr)

	stop()
	// Once the server refuses new connections, the rest of the body
	// comes, and the request is answered.
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	}, time.Minute, 5*time.Millisecond, "the server kept accepting connections")
	_, err = io.WriteString(conn, body[len(body)/2:])
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	answer, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "answer: %s", answer)
	require.JSONEq(t, `{"written": 40}`, string(answer))

	require.NoError(t, <-served)
	require.Contains(t, logs.String(), "stopped: the store is closed")
	// The store was closed cleanly, and the events are in it.
	require.Len(t, queryJSON(t, store, "a_table"), 40)
}

// waitInFlight waits until the server says a request to /v1 is in flight.
func waitInFlight(t *testing.T, addr string) {
	t.Helper()
	require.Eventually(t, func() bool {
		return strings.Contains(metricsOf(addr), "\ntimetable_http_requests_in_flight 1\n")
	}, time.Minute, 5*time.Millisecond, "the write never was in flight")
}

func TestServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	var logs syncWriter
	err = runServe(context.Background(), &globals{storeSpec: "pebble:" + dir}, serveOptions{addr: ln.Addr().String()}, &logs)
	require.ErrorContains(t, err, "address already in use")
	_, err = os.Stat(dir)
	require.True(t, os.IsNotExist(err), "the store was not touched")
}

// serve checks its flags before it touches the store.
func TestServeChecksFlagsFirst(t *testing.T) {
	for _, tt := range []struct {
		o    serveOptions
		want string
	}{
		{serveOptions{addr: "127.0.0.1"}, "--addr"},
		{serveOptions{addr: "127.0.0.1:0", shutdownTimeout: -time.Second}, "--shutdown-timeout"},
		{serveOptions{addr: "127.0.0.1:0", reconcileEvery: -time.Minute}, "--reconcile-interval"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		var logs syncWriter
		err := runServe(context.Background(), &globals{storeSpec: "pebble:" + dir}, tt.o, &logs)
		require.ErrorContains(t, err, tt.want)
		require.Equal(t, ExitUsage, ExitCode(err))
		_, err = os.Stat(dir)
		require.True(t, os.IsNotExist(err), "%s: the store was not touched", tt.want)
	}
}

func TestServeRunsTheLifecycleManager(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store := "--store=pebble:" + dir
	mustRun(t, "", "tenant", "add", "acme", store) // sets the clock to testNow

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncWriter
	addr, served := startServe(ctx, t, &globals{storeSpec: "pebble:" + dir}, serveOptions{shutdownTimeout: time.Minute, reconcileEvery: time.Hour}, &logs)
	// The first cycle runs at start.
	require.Eventually(t, func() bool {
		return strings.Contains(metricsOf(addr), "\ntimetable_lifecycle_cycles_total{result=\"ok\"} 1\n")
	}, time.Minute, 5*time.Millisecond, "no lifecycle cycle")
	stop()
	require.NoError(t, <-served)
	require.Contains(t, logs.String(), "stopped: the store is closed")
	require.Contains(t, logs.String(), "lifecycle action done")

	// This week's table was made by the lifecycle manager, not by a write.
	tables := mustRun(t, "", "tables", store).stdout
	require.Contains(t, tables, "tt_events_1497139200000_1497743999000_6_2017")
}

// startServe runs serve on a free loopback port until ctx ends, and
// returns the address it listens on and where its end is sent.
func startServe(ctx context.Context, t *testing.T, g *globals, o serveOptions, logs io.Writer) (string, <-chan error) {
	t.Helper()
	addrs := make(chan net.Addr, 1)
	served := make(chan error, 1)
	o.addr, o.ready = "127.0.0.1:0", func(a net.Addr) { addrs <- a }
	go func() { served <- runServe(ctx, g, o, logs) }()
	select {
	case a := <-addrs:
		return a.String(), served
	case err := <-served:
		t.Fatalf("serve ended before listening: %v", err)
		return "", nil
	}
}

// metricsOf returns what GET /metrics answers, "" when it fails.
func metricsOf(addr string) string {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return ""
	}
	return string(b)
}
