package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"--help"}, ExitOK},
		{"unknown command", []string{"bogus"}, ExitUsage},
		{"unknown flag", []string{"tables", "--bogus"}, ExitUsage},
		{"flag without its value", []string{"tables", "--format"}, ExitUsage},
		{"bad flag value", []string{"query", "--table", "t", "--from", "0", "--to", "1", "--limit", "ten"}, ExitUsage},
		{"missing required flag", []string{"query", "--from", "0"}, ExitUsage},
		{"bad time", []string{"query", "--table", "t", "--from", "yesterday", "--to", "1"}, ExitUsage},
		{"inverted range", []string{"query", "--table", "t", "--from", "2", "--to", "1"}, ExitUsage},
		{"bad order", []string{"query", "--table", "t", "--from", "0", "--to", "1", "--order", "up"}, ExitUsage},
		{"bad format", []string{"query", "--table", "t", "--from", "0", "--to", "1", "--format", "xml"}, ExitUsage},
		{"extra argument", []string{"tables", "extra"}, ExitUsage},
		{"bad log level", []string{"tables", "--log-level", "loud"}, ExitUsage},
		{"bad store", []string{"tables", "--store", "s3"}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, "", tt.args...)
			require.Equal(t, tt.code, ExitCode(r.err), "error: %v", r.err)
		})
	}
	require.Equal(t, ExitInterrupted, ExitCode(fmt.Errorf("write: %w", context.Canceled)))
	require.Equal(t, ExitFailure, ExitCode(errors.New("disk full")))
}

func TestPrintError(t *testing.T) {
	var b bytes.Buffer
	PrintError(&b, nil)
	require.Empty(t, b.String())
	PrintError(&b, usageErrorf("--format %q: use table or json", "xml"))
	require.Equal(t, "timetable: --format \"xml\": use table or json\nRun 'timetable --help' for usage.\n", b.String())
	b.Reset()
	PrintError(&b, errors.New("timetable: logical table not found"))
	require.Equal(t, "timetable: logical table not found\n", b.String())
}
