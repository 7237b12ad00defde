package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

func TestServeShutsDownGracefully(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store := "--store=pebble:" + dir
	key := strings.TrimSpace(mustRun(t, "", "tenant", "add", "acme", store).stdout)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrs := make(chan net.Addr, 1)
	served := make(chan error, 1)
	var logs syncWriter
	go func() {
		g := &globals{storeSpec: "pebble:" + dir}
		served <- runServe(ctx, g, serveOptions{addr: "127.0.0.1:0", shutdownTimeout: time.Minute, ready: func(a net.Addr) { addrs <- a }}, &logs)
	}()
	var addr string
	select {
	case a := <-addrs:
		addr = a.String()
	case err := <-served:
		t.Fatalf("serve ended before listening: %v", err)
	}

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
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	require.Eventually(t, func() bool {
		res, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return err == nil && strings.Contains(string(b), "\ntimetable_http_requests_in_flight 1\n")
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
		{serveOptions{addr: "127.0.0.1:0", tlsCert: "cert.pem"}, "--tls-key"},
		{serveOptions{addr: "127.0.0.1:0", tlsCert: "no-cert.pem", tlsKey: "no-key.pem"}, "no-cert.pem"},
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
	addr, served := startServe(t, ctx, dir, serveOptions{reconcileEvery: time.Hour}, &logs)
	// The first cycle runs at start.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	require.Eventually(t, func() bool {
		res, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return err == nil && strings.Contains(string(b), "\ntimetable_lifecycle_cycles_total{result=\"ok\"} 1\n")
	}, time.Minute, 5*time.Millisecond, "no lifecycle cycle")
	stop()
	require.NoError(t, <-served)
	require.Contains(t, logs.String(), "stopped: the store is closed")
	require.Contains(t, logs.String(), "lifecycle action done")

	// This week's table was made by the lifecycle manager, not by a write.
	tables := mustRun(t, "", "tables", store).stdout
	require.Contains(t, tables, "tt_events_1497139200000_1497743999000_6_2017")
}

// TestServeTLSAndAdminAPI serves HTTPS with a self-signed certificate and
// the admin API with a token from the environment, with the lifecycle
// manager's last cycle behind /v1/admin/lifecycle.
func TestServeTLSAndAdminAPI(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	t.Setenv(EnvAdminToken, "an-admin-token-of-32-characters!")
	dir := filepath.Join(t.TempDir(), "data")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncWriter
	addr, served := startServe(t, ctx, dir, serveOptions{reconcileEvery: time.Hour, tlsCert: certFile, tlsKey: keyFile}, &logs)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "https://"+addr+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer an-admin-token-of-32-characters!")
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	code, body := do("POST", "/v1/admin/tenants", `{"name": "beta"}`)
	require.Equal(t, http.StatusCreated, code, body)
	require.Contains(t, body, `"secret":"tt_`)
	require.Eventually(t, func() bool {
		code, body := do("GET", "/v1/admin/lifecycle", "")
		return code == http.StatusOK && strings.Contains(body, `"outcome":"ok"`)
	}, time.Minute, 10*time.Millisecond, "no lifecycle cycle")

	// Plain HTTP on the HTTPS port gets no answer of the API.
	res, err := (&http.Client{}).Get("http://" + addr + "/healthz")
	if err == nil {
		res.Body.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode)
	}
	stop()
	require.NoError(t, <-served)
	require.Contains(t, logs.String(), "https://")

	// A token too short to be safe is refused before the store is
	// touched.
	t.Setenv(EnvAdminToken, "short")
	dir = filepath.Join(t.TempDir(), "data")
	err = runServe(context.Background(), &globals{storeSpec: "pebble:" + dir}, serveOptions{addr: "127.0.0.1:0"}, &logs)
	require.ErrorContains(t, err, "at least 16")
	require.Equal(t, ExitUsage, ExitCode(err))
}

// TestServeHelpListsEveryRoute checks that serve --help names every route
// of the server's list.
func TestServeHelpListsEveryRoute(t *testing.T) {
	help := mustRun(t, "", "serve", "--help").stdout
	for _, r := range server.Routes() {
		require.Regexp(t, regexp.QuoteMeta(r.Method)+` +`+regexp.QuoteMeta(r.Pattern)+` `, help)
	}
}

// startServe runs serve on the Pebble store in dir, on a free port, with
// o's other options, until ctx ends; it returns the address once the
// server listens, and the channel of serve's result.
func startServe(t *testing.T, ctx context.Context, dir string, o serveOptions, logs *syncWriter) (string, chan error) {
	t.Helper()
	return startServeWith(t, ctx, &globals{storeSpec: "pebble:" + dir}, o, logs)
}

// startServeWith is startServe with the global flags of g.
func startServeWith(t *testing.T, ctx context.Context, g *globals, o serveOptions, logs *syncWriter) (string, chan error) {
	t.Helper()
	addrs := make(chan net.Addr, 1)
	served := make(chan error, 1)
	o.addr, o.shutdownTimeout, o.ready = "127.0.0.1:0", time.Minute, func(a net.Addr) { addrs <- a }
	go func() { served <- runServe(ctx, g, o, logs) }()
	select {
	case a := <-addrs:
		return a.String(), served
	case err := <-served:
		t.Fatalf("serve ended before listening: %v", err)
		return "", nil
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files, and returns them with a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "timetable test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// serve's metrics hold Go's scheduler latency and GC pauses, which a
// latency the handlers' own time does not explain comes from
// (docs/operations.md).
func TestServeExposesSchedulerAndGCMetrics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncWriter
	addr, served := startServe(t, ctx, dir, serveOptions{}, &logs)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	for _, name := range []string{"go_sched_latencies_seconds_bucket{", "go_sched_pauses_total_gc_seconds_bucket{", "go_gc_duration_seconds{"} {
		require.Contains(t, string(b), "\n"+name)
	}
	stop()
	require.NoError(t, <-served)
}
