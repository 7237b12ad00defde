package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// readHeaderTimeout bounds the time a client takes to send a request's
// headers, against connections held open doing nothing. The body has no
// deadline: a large batch on a slow link takes the time it takes.
const readHeaderTimeout = 10 * time.Second

// idleTimeout closes keep-alive connections idle this long.
const idleTimeout = 2 * time.Minute

// Serve answers requests on ln until ctx ends, then shuts down
// gracefully: it stops accepting connections, closes idle ones, and waits
// up to Options.ShutdownTimeout for the requests in flight to be answered.
// Requests in flight are not cancelled when ctx ends. Serve returns nil
// after a graceful shutdown, and an error when serving fails or the
// requests in flight outlast the timeout: they are then cut off, their
// contexts cancelled, so that their work (a query's reads and
// aggregates) stops rather than outliving the server. It closes ln. It
// does not close the engine.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// Requests keep ctx's values but not its end: a shutdown lets them
	// finish, up to the timeout.
	base, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve http on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing requests in flight", "timeout", s.opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	cut()
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("shut down http server: %w", err), hs.Close())
	}
	return nil
}
