package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/gcfloor"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/mqttsub"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// serveOptions are the flags of `timetable serve`.
type serveOptions struct {
	addr            string
	shutdownTimeout time.Duration
	// reconcileEvery is the mean time between lifecycle cycles; zero
	// turns the lifecycle manager off.
	reconcileEvery time.Duration
	// tlsCert and tlsKey, both or neither, are PEM files: with them the
	// server answers HTTPS only.
	tlsCert, tlsKey string
	// ready, when set, is called with the address the server listens
	// on once it accepts connections.
	ready func(net.Addr)
}

// EnvAdminToken holds the admin token that turns serve's admin API on; it
// wins over the configuration's admin_token_file.
const EnvAdminToken = "TIMETABLE_ADMIN_TOKEN"

// minAdminToken is the shortest admin token serve takes, in bytes.
const minAdminToken = 16

func newServeCmd(g *globals) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080]",
		Short: "Serve the HTTP API v1 until SIGINT or SIGTERM",
		Long: `serve answers the HTTP API v1 on --addr:

` + routeHelp() + `
Every /v1 call needs "Authorization: Bearer <api key>" of a tenant made with
timetable tenant add or the admin API. The admin API (/v1/admin/) is served
only when TIMETABLE_ADMIN_TOKEN, or the file admin_token_file in the
configuration names, holds an admin token (at least 16 bytes), and takes it
as "Authorization: Bearer <admin token>". With --tls-cert and --tls-key the
server answers HTTPS only. The configuration's cors.origins lists the origins
whose pages may call the API from a browser.

On SIGINT or SIGTERM the server stops accepting connections, finishes the
requests in flight (for up to --shutdown-timeout), and closes the store; a
second signal ends it at once.

The lifecycle manager runs inside serve: at start and then about every
--reconcile-interval (within 20%, so servers started together do not act
together) it does what timetable reconcile does. On DynamoDB, of several
servers only the holder of a lease in the meta table acts.

The MQTT subscriptions of the configuration's mqtt section run inside serve
too: each message is acknowledged to its broker once its events are durable.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.refuseServer(cmd, "it is the server"); err != nil {
				return err
			}
			return runServe(cmd.Context(), g, o, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().DurationVar(&o.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long to wait for requests in flight on shutdown")
	cmd.Flags().DurationVar(&o.reconcileEvery, "reconcile-interval", lifecycle.DefaultInterval, "mean time between lifecycle cycles (0 turns the lifecycle manager off)")
	cmd.Flags().StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS only; needs --tls-key")
	cmd.Flags().StringVar(&o.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	return cmd
}

// routeHelp lists the API's routes, from the server's one list of them.
func routeHelp() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range server.Routes() {
		summary := r.Summary
		if r.Admin {
			summary = "(admin) " + summary
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Method, r.Pattern, summary)
	}
	_ = tw.Flush()
	return b.String()
}

// tlsConfig loads --tls-cert and --tls-key, or returns nil without them.
func (o serveOptions) tlsConfig() (*tls.Config, error) {
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return nil, usageErrorf("--tls-cert and --tls-key go together: give both, or neither")
	}
	if o.tlsCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		return nil, usageErrorf("--tls-cert %s, --tls-key %s: %v", o.tlsCert, o.tlsKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, nil
}

// adminToken returns the admin token from TIMETABLE_ADMIN_TOKEN, or from
// the file the configuration names, or "" for none.
func adminToken(cfg config.Config) (string, error) {
	token, from := os.Getenv(EnvAdminToken), EnvAdminToken
	if token == "" && cfg.AdminTokenFile != "" {
		b, err := os.ReadFile(cfg.AdminTokenFile)
		if err != nil {
			return "", usageErrorf("admin_token_file: %v", err)
		}
		token, from = strings.TrimSpace(string(b)), "admin_token_file "+cfg.AdminTokenFile
	}
	if token != "" && len(token) < minAdminToken {
		return "", usageErrorf("the admin token in %s is %d bytes: use at least %d (openssl rand -hex 32 makes one)", from, len(token), minAdminToken)
	}
	return token, nil
}

// runServe serves until ctx ends, then shuts down in order: the HTTP
// server (finishing requests in flight), the engine, the store.
//
// Its flags and address are checked, and the address bound, before the
// store is touched: a mistake in the command line changes nothing.
func runServe(ctx context.Context, g *globals, o serveOptions, stderr io.Writer) (err error) {
	if o.shutdownTimeout < 0 {
		return usageErrorf("--shutdown-timeout %s: cannot be negative", o.shutdownTimeout)
	}
	if o.reconcileEvery < 0 {
		return usageErrorf("--reconcile-interval %s: cannot be negative (0 turns the lifecycle manager off)", o.reconcileEvery)
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usageErrorf("--addr %q: %v", o.addr, err)
	}
	tlsConf, err := o.tlsConfig()
	if err != nil {
		return err
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	token, err := adminToken(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close() // for the paths that never serve; Serve closes it too
	scheme := "http"
	if tlsConf != nil {
		ln, scheme = tls.NewListener(ln, tlsConf), "https"
	}
	// One tenant's fast writers make garbage fast while the live heap
	// stays small: the collector runs no more often than 64 MiB of
	// garbage needs (package gcfloor), unless GOGC is given.
	defer gcfloor.Start(gcfloor.DefaultHeadroom).Stop()
	reg := prometheus.NewRegistry()
	// Beside Go's default metrics, the scheduler's latency histogram
	// (go_sched_latencies_seconds: how long goroutines waited for a core)
	// and the GC's pauses, which a latency that the handlers' own time does
	// not explain comes from.
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler, collectors.MetricsGC)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s, err := g.openSession(ctx, stderr, sessionOptions{logLevel: slog.LevelInfo, registerer: reg})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
			return
		}
		s.log.Info("stopped: the store is closed")
	}()
	lim := cfg.Limits
	// One budget of decoded events, one set of tenant rates, one
	// registry of tenants and keys and one CPU pool for the HTTP server
	// and the MQTT subscriptions alike.
	events := server.NewEventBudget(lim.MaxEventBytesInFlight, lim.TenantShare)
	tenantLimits := lim.Tenant.Or(server.DefaultTenantLimits())
	cpu := cpuPool(s.storeSpec)
	tenants := admission.NewTenants(admission.TenantsOptions{Defaults: tenantLimits, Lookup: s.tenants.Limits, Logger: s.log})
	opts := server.Options{Logger: s.log, Registry: reg, ShutdownTimeout: o.shutdownTimeout, AdminToken: token, CORSOrigins: cfg.CORSOrigins,
		MaxBodyBytes: lim.MaxBodyBytes, MaxEvents: lim.MaxEvents, MaxBodyBytesInFlight: lim.MaxBodyBytesInFlight,
		EventBudget: events, TenantShare: lim.TenantShare, TenantLimits: tenantLimits, Tenants: tenants, TenantDirectory: s.tenants, CPU: cpu,
		TenantNamesInMetrics: lim.TenantNamesInMetrics, StoreKind: storeKind(s.storeSpec)}
	if o.reconcileEvery > 0 {
		r, stop, err := startLifecycle(ctx, s, reg, o.reconcileEvery)
		if err != nil {
			return err
		}
		// Deferred after Close, so it runs before: the store stays open
		// until the lifecycle manager's cycle in progress ends.
		defer stop()
		opts.Lifecycle = r
	}
	srv, err := server.New(s.db, opts)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if subs := s.cfg.MQTT; len(subs) > 0 {
		sub, err := mqttsub.Start(ctx, s.db, subs, mqttsub.Options{Logger: s.log, Registerer: reg,
			MaxPayloadBytes: lim.MaxBodyBytes, MaxEvents: lim.MaxEvents, EventBudget: events, Tenants: tenants, TenantDirectory: s.tenants, CPU: cpu})
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		// Deferred after Close, so it runs before: the subscriptions
		// stop, their writes in progress end, then the store closes.
		defer sub.Close()
	}
	s.log.Info("serving the HTTP API", "addr", scheme+"://"+ln.Addr().String(), "store", s.storeSpec, "admin_api", token != "")
	if o.ready != nil {
		o.ready(ln.Addr())
	}
	return srv.Serve(ctx, ln)
}

// startLifecycle runs the lifecycle manager on the session's store until
// the returned stop is called; stop waits for the cycle in progress.
func startLifecycle(ctx context.Context, s *session, reg prometheus.Registerer, every time.Duration) (r *lifecycle.Reconciler, stop func(), err error) {
	var leaser lifecycle.Leaser
	if ds, ok := s.store.(*dynamostore.Store); ok {
		leaser = lifecycle.TableLease{Store: ds, Table: s.db.Options().Schema.MetaTable, Clock: s.clock}
	}
	r, err = newReconciler(ctx, s.cfg, s.store, s.clock, s.log, leaser, reg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.Run(ctx, every)
	}()
	return r, func() {
		cancel()
		wg.Wait()
	}, nil
}
