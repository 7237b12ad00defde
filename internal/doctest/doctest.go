// Package doctest reads the shell examples of timetable's Markdown pages,
// so that a test can run them (cmd/timetable's TestDocs) and the pages
// and the program cannot drift apart. Its own tests hold the tree to
// docs/design.md: no package of the product imports internal/ outside its
// tests (TestImportsIntoInternal), and "Where the code is" names every
// folder of the module (TestWhereTheCodeIs).
//
// # The convention
//
// A fenced block whose info string is sh is run; other blocks (yaml,
// sql, a bare fence for a synopsis) are not. HTML comments on the lines
// just before the fence, which Markdown does not show, say more:
//
//	<!-- doctest: skip REASON -->       the block is not run, for REASON
//	                                    (it needs AWS, runs forever, ...)
//	<!-- doctest: needs CMD... -->      the block needs these commands on
//	                                    the PATH; the test skips it without
//	                                    them, or fails under make test;
//	                                    "dynamodb" is a DynamoDB-API server,
//	                                    which scripts/with-dynamodb.sh starts
//	                                    and --store dynamodb then reaches
//	<!-- doctest: setup
//	SHELL LINES
//	-->                                 lines run just before the block,
//	                                    for what the page assumes from
//	                                    elsewhere (a tenant's key, a file)
//
// The blocks of a page run in one shell, one after the other, in order,
// as a reader runs them; a block fails when a command in it fails (bash
// -e, with pipefail). A full-line comment right after a command is what
// that command prints: the test checks loosely that the block printed it
// (whitespace ignored, "..." or "…" matching anything), in order among
// the block's other such comments. A comment at the end of a command's
// line only explains the command.
package doctest

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// Block is a shell block of a page.
type Block struct {
	// Line is the line of the opening fence, from 1.
	Line int
	// Script is the block's text, with the lines of any setup comment
	// before it.
	Script string
	// Skip is why the block is not run; empty when it is.
	Skip string
	// Needs are the commands the block needs on the PATH.
	Needs []string
	// Output are the outputs the block shows, in order: each the text of
	// the full-line comments after a command, joined by newlines.
	Output []string
}

// marker is an HTML comment naming doctest.
var marker = regexp.MustCompile(`^<!--\s*doctest:\s*(\w+)\s*(.*?)\s*(-->)?$`)

// Parse returns the sh blocks of a Markdown page.
func Parse(page string) ([]Block, error) {
	var (
		blocks  []Block
		pending Block // what markers said of the next block
		inSetup bool
		setup   []string
		inFence bool
		fence   string
		indent  string
		body    []string
		start   int
		run     bool
	)
	sc := bufio.NewScanner(strings.NewReader(page))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case inFence:
			if strings.TrimSpace(line) == fence {
				inFence = false
				if run {
					b := pending
					b.Line = start
					b.Output = outputs(body)
					b.Script = strings.Join(append(setup, body...), "\n") + "\n"
					blocks = append(blocks, b)
				}
				pending, setup = Block{}, nil
				continue
			}
			body = append(body, strings.TrimPrefix(line, indent))
		case inSetup:
			if strings.TrimSpace(line) == "-->" {
				inSetup = false
				continue
			}
			setup = append(setup, line)
		case strings.HasPrefix(strings.TrimLeft(line, " "), "```"):
			// A fence may be indented, in a list item.
			trimmed := strings.TrimLeft(line, " ")
			indent = line[:len(line)-len(trimmed)]
			info := strings.Fields(strings.TrimLeft(trimmed, "`"))
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
			inFence, body, start = true, nil, n
			run = len(info) > 0 && info[0] == "sh"
			if !run && (pending.Skip != "" || len(pending.Needs) > 0 || setup != nil) {
				return nil, fmt.Errorf("line %d: a doctest marker before a block that is not sh", n)
			}
		default:
			// A marker starts its line: an indented one is an example, in
			// a code block.
			m := marker.FindStringSubmatch(strings.TrimRight(line, " "))
			if m == nil {
				if strings.TrimSpace(line) != "" {
					// A marker belongs to the block right after it.
					if pending.Skip != "" || len(pending.Needs) > 0 || setup != nil {
						return nil, fmt.Errorf("line %d: a doctest marker not followed by a block", n)
					}
				}
				continue
			}
			closed := m[3] != ""
			switch m[1] {
			case "skip":
				if m[2] == "" || !closed {
					return nil, fmt.Errorf("line %d: write <!-- doctest: skip REASON -->", n)
				}
				pending.Skip = m[2]
			case "needs":
				if m[2] == "" || !closed {
					return nil, fmt.Errorf("line %d: write <!-- doctest: needs CMD... -->", n)
				}
				pending.Needs = append(pending.Needs, strings.Fields(m[2])...)
			case "setup":
				if closed {
					setup = append(setup, m[2])
				} else {
					inSetup = true
					if m[2] != "" {
						setup = append(setup, m[2])
					}
				}
			default:
				return nil, fmt.Errorf("line %d: unknown doctest marker %q: use skip, needs or setup", n, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if inFence || inSetup {
		return nil, fmt.Errorf("the page ends inside a block or a setup comment")
	}
	return blocks, nil
}

// heredoc finds the delimiter of a here-document a line starts.
var heredoc = regexp.MustCompile(`<<-?\s*['"]?(\w+)['"]?`)

// outputs returns the outputs a block's lines show: runs of full-line
// comments right after a command, outside here-documents.
func outputs(lines []string) []string {
	var (
		outs    []string
		cur     []string
		command bool // the line before was a command, or its output
		doc     string
	)
	flush := func() {
		if len(cur) > 0 {
			outs = append(outs, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case doc != "":
			if t == doc {
				doc = ""
			}
			command = false
		case strings.HasPrefix(t, "#"):
			if command {
				cur = append(cur, strings.TrimSpace(strings.TrimPrefix(t, "#")))
			}
		case t == "":
			flush()
			command = false
		default:
			flush()
			command = true
			if m := heredoc.FindStringSubmatch(t); m != nil {
				doc = m[1]
			}
		}
	}
	flush()
	return outs
}

// Matches reports whether got holds each of want, in order, loosely:
// whitespace is ignored, and "..." or "…" in want matches anything.
func Matches(got string, want []string) bool {
	if len(want) == 0 {
		return true
	}
	var pattern strings.Builder
	pattern.WriteString("(?s)")
	for i, w := range want {
		if i > 0 {
			pattern.WriteString(".*?")
		}
		w = strings.ReplaceAll(squeeze(w), "…", "...")
		for j, piece := range strings.Split(w, "...") {
			if j > 0 {
				pattern.WriteString(".*?")
			}
			pattern.WriteString(regexp.QuoteMeta(piece))
		}
	}
	return regexp.MustCompile(pattern.String()).MatchString(squeeze(got))
}

// squeeze removes every white space character.
func squeeze(s string) string {
	return strings.Join(strings.Fields(s), "")
}
