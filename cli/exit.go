package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of the timetable binary.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// usageError is an error in how a command was called: a flag, an argument
// or a flag's value.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf returns a usageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// cobraUsage are the starts of the messages of cobra's own usage errors,
// which carry no type of their own.
var cobraUsage = []string{"unknown command", "required flag(s)", "accepts ", "requires at least", "requires at most", "invalid argument", "unknown flag", "unknown shorthand flag", "flag needs an argument"}

// isUsage reports whether err is a usage error.
func isUsage(err error) bool {
	var ue usageError
	if errors.As(err, &ue) {
		return true
	}
	for _, p := range cobraUsage {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// ExitCode returns the exit status for the error a command returned:
// ExitOK for nil, ExitUsage for a usage error, ExitInterrupted when the
// command stopped because its context ended (a signal), and ExitFailure
// otherwise.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case isUsage(err):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	default:
		return ExitFailure
	}
}

// PrintError writes the error a command returned to w, with a hint at
// --help for a usage error. It writes nothing for nil.
func PrintError(w io.Writer, err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "timetable:") {
		msg = "timetable: " + msg
	}
	fmt.Fprintln(w, msg)
	if isUsage(err) {
		fmt.Fprintln(w, "Run 'timetable --help' for usage.")
	}
}
