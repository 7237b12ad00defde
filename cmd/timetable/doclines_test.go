package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/cli"
	"github.com/timetabledb/timetable/config"
)

// TestDocsCommandLines reads every `timetable ...` command line of the
// README and docs/*.md, in code blocks and inline code, and the indented
// examples of each command's help, and checks it
// against the binary's command tree: each subcommand it names exists,
// and so does each --flag, on that command or inherited.
func TestDocsCommandLines(t *testing.T) {
	root := cli.NewRoot()
	pages := docPages(t)
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, l := range commandLines(string(text)) {
			checked++
			if err := checkCommandLine(root, l.text); err != nil {
				t.Errorf("%s:%d: %s: %v", page, l.line, l.text, err)
			}
		}
	}
	// The help's own examples, as --help prints them.
	inHelp := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.Long+"\n"+c.Example, "\n") {
			text := strings.TrimSpace(line)
			if !strings.HasPrefix(line, "  ") || !strings.HasPrefix(text, "timetable ") && !strings.Contains(text, "$(timetable ") {
				continue // prose, which names timetable in passing
			}
			inHelp++
			for _, m := range blockCommand.FindAllStringSubmatch(strings.SplitN(line, " #", 2)[0], -1) {
				if err := checkCommandLine(root, m[1]); err != nil {
					t.Errorf("%s --help: %s: %v", c.CommandPath(), m[1], err)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	require.GreaterOrEqual(t, inHelp, 4, "command lines found in the help")
	// The pages name about a hundred: finding few means the
	// reading broke, not that the pages are right.
	t.Logf("%d command lines checked", checked)
	require.Greater(t, checked, 80, "command lines found")
}

// TestDocsCommandLinesFindsMistakes feeds the check the mistakes the docs
// once made, so that it cannot pass by checking nothing.
func TestDocsCommandLinesFindsMistakes(t *testing.T) {
	root := cli.NewRoot()
	for _, tc := range []struct{ line, want string }{
		{"timetable archive verfy --table T", `no command "verfy" of timetable archive`},
		{"timetable archive list|verfy ...", `no command "verfy" of timetable archive`},
		{"timetable query --tenant acme --precision=s", `no flag --precision of timetable query`},
		{"timetable tables adopt NAME --forse", `no flag --forse of timetable tables adopt`},
		{"timetable srve", `no command "srve" of timetable`},
	} {
		err := checkCommandLine(root, tc.line)
		require.Error(t, err, tc.line)
		require.Contains(t, err.Error(), tc.want)
	}
	for _, ok := range []string{
		"timetable --server http://127.0.0.1:8080 --log-level debug tenant add acme",
		"timetable archive list|export|verify|restore ...",
		"timetable query --tenant acme --table a_table [--from 2017-04-10T00:00:00Z|now-24h] --log-level debug",
		"timetable COMMAND --help",
		"timetable tenant add acme",
	} {
		require.NoError(t, checkCommandLine(root, ok), ok)
	}
}

func docPages(t *testing.T) []string {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	return append([]string{filepath.Join("..", "..", "README.md")}, pages...)
}

// docLine is a command line of a page.
type docLine struct {
	line int
	text string
}

var (
	// inlineCommand is inline code that is a command line.
	inlineCommand = regexp.MustCompile("`(timetable [^`]+)`")
	// blockCommand is a command line in a code block: timetable where a
	// shell starts a command, up to where the command ends.
	blockCommand = regexp.MustCompile(`(?:^|[\s($;|&])(timetable(?:[ \t]+[^\s;&)#>]+)+)`)
	fence        = regexp.MustCompile("^\\s*```\\s*(\\w*)")
)

// commandLines returns the timetable command lines of a page: inline
// code starting with "timetable ", and in code blocks other than yaml,
// json and the like, every command timetable starts (a line continued
// with a backslash read whole, comments left out).
func commandLines(page string) []docLine {
	var out []docLine
	lines := strings.Split(page, "\n")
	inBlock, shell := false, false
	for i := 0; i < len(lines); i++ {
		line, n := lines[i], i+1
		if m := fence.FindStringSubmatch(line); m != nil {
			inBlock = !inBlock
			if inBlock {
				switch m[1] {
				case "", "sh", "bash", "shell", "console":
					shell = true
				default:
					shell = false
				}
			}
			continue
		}
		if !inBlock {
			for _, m := range inlineCommand.FindAllStringSubmatch(line, -1) {
				out = append(out, docLine{n, m[1]})
			}
			continue
		}
		if !shell {
			continue
		}
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue // what the command before printed
		}
		if c := strings.Index(line, " #"); c >= 0 {
			line = line[:c]
		}
		for _, m := range blockCommand.FindAllStringSubmatch(line, -1) {
			out = append(out, docLine{n, m[1]})
		}
	}
	return out
}

var (
	// word is a subcommand's place: a lowercase name, or names joined
	// by | for a synopsis of several.
	word = regexp.MustCompile(`^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$`)
	// longFlag is a flag's name, wherever it is in the line.
	longFlag = regexp.MustCompile(`(?:^|[\s\[|])--([a-z][a-z0-9-]*)`)
)

// checkCommandLine walks a command line's words down the command tree and
// checks its flags on the command it reaches.
func checkCommandLine(root *cobra.Command, line string) error {
	fields := strings.Fields(line)
	cmd := root
	for i := 1; i < len(fields); i++ {
		f := fields[i]
		if name, ok := strings.CutPrefix(f, "--"); ok && !strings.Contains(name, "=") {
			// A flag before the subcommand: skip its value.
			if fl := lookupFlag(cmd, name); fl != nil && fl.NoOptDefVal == "" {
				i++
			}
			continue
		}
		if !word.MatchString(f) {
			break
		}
		if strings.Contains(f, "|") {
			for _, name := range strings.Split(f, "|") {
				if sub := child(cmd, name); sub == nil {
					return fmt.Errorf("no command %q of %s", name, cmd.CommandPath())
				}
			}
			break
		}
		sub := child(cmd, f)
		if sub == nil {
			if cmd.HasAvailableSubCommands() {
				return fmt.Errorf("no command %q of %s", f, cmd.CommandPath())
			}
			break // an argument
		}
		cmd = sub
	}
	for _, m := range longFlag.FindAllStringSubmatch(line, -1) {
		name := m[1]
		if name == "help" || lookupFlag(cmd, name) != nil {
			continue
		}
		return fmt.Errorf("no flag --%s of %s", name, cmd.CommandPath())
	}
	return nil
}

// lookupFlag returns cmd's flag of that name, its own or inherited.
func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags(), cmd.InheritedFlags()} {
		if f := fs.Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

// child returns cmd's subcommand of that name or alias, nil when it has
// none.
func child(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// TestDocsConfigDefaults checks the defaults docs/configuration.md gives
// for a family's keys: a file that sets a key to the default the page
// gives configures exactly the family a file without the key does. (The
// other sections' keys keep zero for their defaults, which the server,
// the engine and the stores resolve.)
func TestDocsConfigDefaults(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	require.NoError(t, err)
	want, err := config.Parse([]byte("families:\n  - {name: events}\n"))
	require.NoError(t, err)
	// A row: | `key` | `default` ... |
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| `([^`]+)`")
	var section string
	checked := 0
	for n, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "## ") {
			section = line
			continue
		}
		m := row.FindStringSubmatch(line)
		if section != "## Families" || m == nil {
			continue
		}
		key, value := m[1], strings.ReplaceAll(m[2], "{name}", "events")
		got, err := config.Parse(fmt.Appendf(nil, "families:\n  - {name: events, %s: %s}\n", key, value))
		if !assert.NoError(t, err, "configuration.md:%d: %s: %s", n+1, key, value) {
			continue
		}
		assert.Equal(t, want.Families, got.Families, "configuration.md:%d: the default of %s is not %s", n+1, key, value)
		checked++
	}
	require.GreaterOrEqual(t, checked, 12, "defaults found")
}
