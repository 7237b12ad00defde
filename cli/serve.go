package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/server"
)

// serveOptions are the flags of `timetable serve`.
type serveOptions struct {
	addr            string
	shutdownTimeout time.Duration
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
  GET  /healthz, GET /metrics

Every /v1 call needs "Authorization: Bearer <api key>" of a tenant made with
timetable tenant add. On SIGINT or SIGTERM the server stops accepting
connections, finishes the requests in flight (for up to --shutdown-timeout),
and closes the store; a second signal ends it at once.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, o, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().DurationVar(&o.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long to wait for requests in flight on shutdown")
	return cmd
}

// runServe serves until ctx ends, then shuts down in order: the HTTP
// server (finishing requests in flight), the engine, the store.
func runServe(ctx context.Context, g *globals, o serveOptions, stderr io.Writer) (err error) {
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
	srv := server.New(s.db, server.Options{Logger: s.log, Registry: reg, ShutdownTimeout: o.shutdownTimeout})
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	s.log.Info("serving the HTTP API", "addr", "http://"+ln.Addr().String(), "store", s.storeSpec)
	if o.ready != nil {
		o.ready(ln.Addr())
	}
	return srv.Serve(ctx, ln)
}
