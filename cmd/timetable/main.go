// Command timetable is the timetable binary: the HTTP server, the CLI and
// the tools of package cli. main only wires them to the process: the
// commands, the signals that end them, and the exit status.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/timetabledb/timetable/cli"
)

func main() {
	// The first SIGINT or SIGTERM ends the context: serve shuts down
	// gracefully, the other commands stop. Once it has ended, signals
	// get their default action again, so a second one kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := cli.NewRoot().ExecuteContext(ctx)
	stop()
	cli.PrintError(os.Stderr, err)
	os.Exit(cli.ExitCode(err))
}
