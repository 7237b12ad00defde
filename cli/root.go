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

Create a tenant, then start a server on the embedded store in
./timetable-data and send it events (the embedded store has one owner at a
time: while serve runs, add tenants through its admin API, see serve --help):

  timetable tenant add acme        # prints the tenant's API key once
  timetable serve`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "YAML configuration file (families, tables); the defaults without one")
	pf.StringVar(&g.storeSpec, "store", "", "where the data lives: pebble:DIR or dynamodb (default pebble:"+defaultPebbleDir+")")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (default info for serve, warn otherwise)")
	pf.StringVar(&g.logFormat, "log-format", "text", "text or json")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(
		newServeCmd(g),
		newTenantCmd(g),
		newWriteCmd(g),
		newQueryCmd(g),
		newTablesCmd(g),
		newReconcileCmd(g),
		newPlanCmd(),
		newArchiveCmd(g),
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
