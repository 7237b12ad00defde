package server_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// TestStoreOutage stops the DynamoDB endpoint under a running server and
// brings it back: while it is down, everything that needs the store
// answers 503 with Retry-After (writes, queries, API keys not yet seen,
// /readyz) and /healthz stays 200; once it is back, the same server
// answers as before, without a restart.
func TestStoreOutage(t *testing.T) {
	ep := dynamoEndpoint(t)
	target, err := url.Parse(ep)
	require.NoError(t, err)
	proxy := newTCPProxy(t, target.Host)
	store, cfg := openDynamo(t, "http://"+proxy.addr, dynamostore.Options{
		MaxAttempts:    3,
		RetryBaseDelay: time.Millisecond,
		MaxBackoff:     10 * time.Millisecond,
	})
	f := newFixtureOn(t, store, cfg, prometheus.NewRegistry(), server.Options{})
	body := ndjson(now.Add(-time.Hour), "car-1", 10)
	res := f.postNDJSON(f.acme, "a_table", body)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	ready := f.do("GET", "/readyz", "", nil)
	require.Equal(t, http.StatusOK, ready.status, "body: %s", ready.body)
	require.JSONEq(t, `{"status":"ready"}`, string(ready.body))

	proxy.stop()
	unavailable := func(what string, res response) {
		t.Helper()
		require.Equal(t, http.StatusServiceUnavailable, res.status, "%s: body: %s", what, res.body)
		require.NotEmpty(t, res.header.Get("Retry-After"), what)
		require.Contains(t, res.json(t)["error"], "timetable: store unavailable; retry the request", what)
	}
	unavailable("write", f.postNDJSON(f.acme, "a_table", body))
	unavailable("query", f.get(f.acme, "a_table", wide))
	unavailable("InfluxQL", f.do("GET", "/query?db=acme&q=SELECT+*+FROM+a_table", f.acme, nil))
	// globex's key was never looked up: the server cannot tell whether
	// it is valid, and says so, rather than 401 or 500.
	unavailable("key not yet seen", f.postNDJSON(f.globex, "a_table", body))
	unavailable("unknown key", f.postNDJSON("tt_nosuchkey", "a_table", body))
	ready = f.do("GET", "/readyz", "", nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status, "body: %s", ready.body)
	require.NotEmpty(t, ready.header.Get("Retry-After"))
	require.Equal(t, map[string]any{"status": "unavailable", "reason": "store unavailable"}, ready.json(t))
	healthz := f.do("GET", "/healthz", "", nil)
	require.Equal(t, http.StatusOK, healthz.status, "liveness does not depend on the store: %s", healthz.body)

	proxy.start()
	ready = f.do("GET", "/readyz", "", nil)
	require.Equal(t, http.StatusOK, ready.status, "body: %s", ready.body)
	res = f.postNDJSON(f.acme, "a_table", body)
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	res = f.postNDJSON(f.globex, "a_table", ndjson(now.Add(-time.Hour), "car-2", 10))
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	res = f.postNDJSON("tt_nosuchkey", "a_table", body)
	require.Equal(t, http.StatusUnauthorized, res.status, "body: %s", res.body)
	require.Len(t, f.all(f.acme, "a_table", wide), 10)
	require.Len(t, f.all(f.globex, "a_table", wide), 10)
}

// TestReadyzTimeout checks that /readyz answers within
// Options.ReadyTimeout when the store's retries would take longer.
func TestReadyzTimeout(t *testing.T) {
	ep := dynamoEndpoint(t)
	target, err := url.Parse(ep)
	require.NoError(t, err)
	proxy := newTCPProxy(t, target.Host)
	store, cfg := openDynamo(t, "http://"+proxy.addr, dynamostore.Options{
		MaxAttempts:    1000,
		RetryBaseDelay: 100 * time.Millisecond,
		MaxBackoff:     100 * time.Millisecond,
	})
	f := newFixtureOn(t, store, cfg, prometheus.NewRegistry(), server.Options{ReadyTimeout: 300 * time.Millisecond})
	proxy.stop()
	// The store's retries would take 100 s: the answer, which names the
	// timeout, shows that the server stopped waiting at ReadyTimeout.
	ready := f.do("GET", "/readyz", "", nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status, "body: %s", ready.body)
	require.Equal(t, map[string]any{"status": "unavailable", "reason": "store did not answer within 300ms"}, ready.json(t))
	require.NotEmpty(t, f.logs.records(t, map[string]any{"path": "/readyz", "level": "ERROR"}), "the cause is logged")
}

// tcpProxy forwards TCP connections to a target until stopped; started
// again, it listens on the same address.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string

	mu struct {
		sync.Mutex
		ln    net.Listener
		conns map[net.Conn]bool
	}
	wg sync.WaitGroup
}

// newTCPProxy starts a proxy to target on a free loopback port, stopped
// when the test ends.
func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{t: t, target: target, addr: "127.0.0.1:0"}
	p.start()
	t.Cleanup(p.stop)
	return p
}

// start listens and forwards, on the address of the first start.
func (p *tcpProxy) start() {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(p.t, err)
	p.addr = ln.Addr().String()
	p.mu.Lock()
	p.mu.ln = ln
	p.mu.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.forward(c) })
		}
	})
}

// forward copies between c and a new connection to the target.
func (p *tcpProxy) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// track records the connections for stop to close; false when the proxy
// stopped meanwhile.
func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.ln == nil {
		return false
	}
	for _, c := range conns {
		p.mu.conns[c] = true
	}
	return true
}

// stop closes the listener and every connection, so that the target is
// unreachable: connections are refused and those open are reset.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	if p.mu.ln != nil {
		if err := p.mu.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			p.t.Errorf("close proxy: %v", err)
		}
		p.mu.ln = nil
	}
	for c := range p.mu.conns {
		c.Close()
	}
	p.mu.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
