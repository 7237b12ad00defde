package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/event"
)

// Environment variables the commands read.
const (
	// EnvNow stops the clock at a time (RFC 3339 or Unix milliseconds),
	// for tests and demos.
	EnvNow = "TIMETABLE_NOW"
	// EnvTenant names the tenant of write and query when --tenant does
	// not.
	EnvTenant = "TIMETABLE_TENANT"
)

// globals holds the flags every command takes.
type globals struct {
	configPath string
	storeSpec  string
	logLevel   string
	logFormat  string
	// server is the URL of a running server the commands go through
	// instead of opening the store (remote.go).
	server string
}

// NewRoot returns the timetable command with all its subcommands. Run it
// with ExecuteContext: the context's end (a signal) stops serve
// gracefully and interrupts the others.
func NewRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "timetable",
		Short: "A time-series and IoT event store on DynamoDB tables per period, or embedded Pebble",
		Long: `timetable stores time-series and IoT events in tables per period: in
Amazon DynamoDB, or in an embedded Pebble store on one machine.

Start a server on the embedded store in ./timetable-data with an admin
token, then add a tenant through it and send it events:

  export TIMETABLE_ADMIN_TOKEN=$(openssl rand -hex 32)
  timetable serve &
  export TIMETABLE_SERVER=http://127.0.0.1:8080
  export TIMETABLE_API_KEY=$(timetable tenant add acme)   # printed once
  timetable write --table cars events.ndjson
  timetable query --table cars --from now-1h

With --server URL (or TIMETABLE_SERVER), tenant, write, query, tables and
reconcile --dry-run go through the server's HTTP API, with the admin token
in TIMETABLE_ADMIN_TOKEN (tenant, tables, reconcile) or a tenant's API key in
TIMETABLE_API_KEY (write, query). Without it they open the store themselves,
which the embedded store allows one process at a time.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "YAML configuration file (families, tables); the defaults without one")
	pf.StringVar(&g.storeSpec, "store", "", "where the data lives: pebble:DIR or dynamodb (default pebble:"+defaultPebbleDir+")")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (default info for serve, warn otherwise)")
	pf.StringVar(&g.logFormat, "log-format", "text", "text or json")
	pf.StringVar(&g.server, "server", "", "go through the running server at this URL instead of opening the store (default $"+EnvServer+")")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(
		newServeCmd(g),
		newTenantCmd(g),
		newWriteCmd(g),
		newImportCmd(g),
		newQueryCmd(g),
		newTablesCmd(g),
		newReconcileCmd(g),
		newPlanCmd(),
		newArchiveCmd(g),
		newCompactCmd(g),
		newMigrateCmd(g),
	)
	return root
}

// loadConfig reads --config, or returns the defaults without it.
func (g *globals) loadConfig() (config.Config, error) {
	if g.configPath == "" {
		return config.Default(), nil
	}
	return config.Load(g.configPath)
}

// logger returns the logger of a command, writing to w at --log-level, or
// at def when the flag is not set.
func (g *globals) logger(w io.Writer, def slog.Level) (*slog.Logger, error) {
	level := def
	if g.logLevel != "" {
		if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
			return nil, usageErrorf("--log-level %q: use debug, info, warn or error", g.logLevel)
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(g.logFormat) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageErrorf("--log-format %q: use text or json", g.logFormat)
}

// clock returns the wall clock, or a clock stopped at TIMETABLE_NOW.
func (g *globals) clock() (clock.Clock, error) {
	s := os.Getenv(EnvNow)
	if s == "" {
		return clock.Real{}, nil
	}
	t, err := event.ParseTime(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvNow, err)
	}
	return clock.NewManual(t), nil
}

// tenantName returns --tenant, or TIMETABLE_TENANT.
func tenantName(flags *pflag.FlagSet) (string, error) {
	name, _ := flags.GetString("tenant")
	if name == "" {
		name = os.Getenv(EnvTenant)
	}
	if name == "" {
		return "", usageErrorf("no tenant: pass --tenant NAME or set %s", EnvTenant)
	}
	return name, nil
}

// noTenantFlag refuses --tenant to a command that goes through a server,
// where the API key names the tenant.
func noTenantFlag(cmd *cobra.Command) error {
	if cmd.Flags().Changed("tenant") {
		return usageErrorf("--tenant: with --server the API key in %s names the tenant; leave --tenant out", EnvAPIKey)
	}
	return nil
}
