package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

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
	// ready, when set, is called with the address the server listens
	// on once it accepts connections.
	ready func(net.Addr)
}

func newServeCmd(g *globals) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080]",
		Short: "Serve the HTTP API v1 until SIGINT or SIGTERM",
		Long: `serve answers the HTTP API v1 on --addr:

  POST /v1/tables/{table}/events   a JSON array, or NDJSON with Content-Type: application/x-ndjson
  GET  /v1/tables/{table}/events   ?from=&to=&series=&order=asc|desc&limit=&cursor=&fields=a,b
  POST /write, /api/v2/write       InfluxDB line protocol (1.x and 2.x), GET /ping
  GET  /healthz (liveness), GET /readyz (readiness: the store answers), GET /metrics

Every /v1 call needs "Authorization: Bearer <api key>" of a tenant made with
timetable tenant add. On SIGINT or SIGTERM the server stops accepting
connections, finishes the requests in flight (for up to --shutdown-timeout),
and closes the store; a second signal ends it at once.

The lifecycle manager runs inside serve: at start and then about every
--reconcile-interval (within 20%, so servers started together do not act
together) it does what timetable reconcile does. On DynamoDB, of several
servers only the holder of a lease in the meta table acts.

The MQTT subscriptions of the configuration's mqtt section run inside serve
too: each message is acknowledged to its broker once its events are durable.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, o, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().DurationVar(&o.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long to wait for requests in flight on shutdown")
	cmd.Flags().DurationVar(&o.reconcileEvery, "reconcile-interval", lifecycle.DefaultInterval, "mean time between lifecycle cycles (0 turns the lifecycle manager off)")
	return cmd
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
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close() // for the paths that never serve; Serve closes it too
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
	if o.reconcileEvery > 0 {
		stop, err := startLifecycle(ctx, s, reg, o.reconcileEvery)
		if err != nil {
			return err
		}
		// Deferred after Close, so it runs before: the store stays open
		// until the lifecycle manager's cycle in progress ends.
		defer stop()
	}
	srv, err := server.New(s.db, server.Options{Logger: s.log, Registry: reg, ShutdownTimeout: o.shutdownTimeout})
	if err != nil {
		return usageErrorf("%v", err)
	}
	if subs := s.db.Options().Config.MQTT; len(subs) > 0 {
		sub, err := mqttsub.Start(ctx, s.db, subs, mqttsub.Options{Logger: s.log, Registerer: reg})
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		// Deferred after Close, so it runs before: the subscriptions
		// stop, their writes in progress end, then the store closes.
		defer sub.Close()
	}
	s.log.Info("serving the HTTP API", "addr", "http://"+ln.Addr().String(), "store", s.storeSpec)
	if o.ready != nil {
		o.ready(ln.Addr())
	}
	return srv.Serve(ctx, ln)
}

// startLifecycle runs the lifecycle manager on the session's store until
// the returned stop is called; stop waits for the cycle in progress.
func startLifecycle(ctx context.Context, s *session, reg prometheus.Registerer, every time.Duration) (stop func(), err error) {
	var leaser lifecycle.Leaser
	if ds, ok := s.store.(*dynamostore.Store); ok {
		leaser = lifecycle.TableLease{Store: ds, Table: s.db.Options().MetaTable, Clock: s.clock}
	}
	r, err := newReconciler(ctx, s.db.Options().Config, s.store, s.clock, s.log, leaser, reg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.Run(ctx, every)
	}()
	return func() {
		cancel()
		wg.Wait()
	}, nil
}
