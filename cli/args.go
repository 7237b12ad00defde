package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// noArgs refuses arguments, as a usage error. Of a command with
// subcommands, the argument is a subcommand it does not have: the error
// names it and the subcommands it is close to.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasAvailableSubCommands() {
		return unknownCommand(cmd, args[0])
	}
	return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
}

// unknownCommand is the usage error of a subcommand cmd does not have,
// with the subcommands whose names are close to it, or all of them.
func unknownCommand(cmd *cobra.Command, name string) error {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default
	}
	near := cmd.SuggestionsFor(name)
	if len(near) == 0 {
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				near = append(near, c.Name())
			}
		}
		return usageErrorf("unknown command %q for %q: its commands are %s", name, cmd.CommandPath(), joinOr(near))
	}
	return usageErrorf("unknown command %q for %q: did you mean %s?", name, cmd.CommandPath(), strings.Join(near, " or "))
}

// showHelp is the RunE of a command that only groups subcommands: called
// alone, it prints its help. Its Args, noArgs, refuses a subcommand it
// does not have, which cobra would otherwise answer with the help and
// exit status 0.
func showHelp(cmd *cobra.Command, _ []string) error {
	return cmd.Help()
}

// exactArgs requires n arguments, as a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// checkFormat refuses a --format value outside the allowed ones.
func checkFormat(format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return usageErrorf("--format %q: use %s", format, joinOr(allowed))
}

// joinOr joins words as "a, b or c".
func joinOr(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	s := words[0]
	for _, w := range words[1 : len(words)-1] {
		s += ", " + w
	}
	return s + " or " + words[len(words)-1]
}

// maxArgs allows at most n arguments, as a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s takes at most %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// count writes n things: "1 bad line", "2 bad lines".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
