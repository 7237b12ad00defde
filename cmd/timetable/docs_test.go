package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/doctest"
	"github.com/timetabledb/timetable/internal/dynamotest"
)

// serverPrelude starts a server for a page of docs/ as the README's quick
// start does, with the admin token exported: the state those pages
// assume. The README starts its own.
const serverPrelude = `export TIMETABLE_ADMIN_TOKEN=$(openssl rand -hex 32)
timetable serve --addr 127.0.0.1:8080 2>>serve.log &
server=$!
for _ in $(seq 200); do
  kill -0 $server 2>/dev/null || break
  grep -q 'serving the HTTP API' serve.log && curl -sf --max-time 1 http://127.0.0.1:8080/readyz >/dev/null && break
  sleep 0.1
done
kill -0 $server && grep -q 'serving the HTTP API' serve.log && curl -sf --max-time 1 http://127.0.0.1:8080/readyz >/dev/null
`

// TestDocs runs the sh blocks of the README and of docs/*.md
// (internal/doctest has the convention) with the binary on the PATH,
// each page in a shell of its own in a new directory, its port 8080
// replaced by a free loopback port, and checks that every block exits 0
// and prints what the page shows.
func TestDocs(t *testing.T) {
	bin := build(t)
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the docs' examples need %s", tool)
		}
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	pages = append([]string{filepath.Join("..", "..", "README.md")}, pages...)
	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			runPage(t, bin, page)
		})
	}
}

// block is where a block's output starts in the page's transcript.
const blockMark = "::doctest-block "

func runPage(t *testing.T, bin, page string) {
	text, err := os.ReadFile(page)
	require.NoError(t, err)
	blocks, err := doctest.Parse(string(text))
	require.NoError(t, err, page)

	port := freePort(t)
	var script strings.Builder
	script.WriteString("set -eo pipefail\n")
	if filepath.Base(page) != "README.md" {
		script.WriteString(strings.ReplaceAll(serverPrelude, "8080", strconv.Itoa(port)))
	}
	var run []doctest.Block
	for _, b := range blocks {
		if b.Skip != "" {
			t.Logf("%s:%d: not run: %s", page, b.Line, b.Skip)
			continue
		}
		if missing := missingCommands(b.Needs); missing != "" {
			if os.Getenv("TIMETABLE_REQUIRE_CLIENTS") != "" {
				t.Errorf("%s:%d: needs %s, which is not installed (scripts/install-clients.sh)", page, b.Line, missing)
			} else {
				t.Logf("%s:%d: not run: %s is not installed", page, b.Line, missing)
			}
			continue
		}
		fmt.Fprintf(&script, "echo '%s%d'\n", blockMark, len(run))
		script.WriteString(strings.ReplaceAll(b.Script, "8080", strconv.Itoa(port)))
		run = append(run, b)
	}
	if len(run) == 0 {
		return
	}
	fmt.Fprintf(&script, "echo '%sEND'\n", blockMark)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(script.String())
	// A file, not a pipe: servers the blocks leave in the background
	// would hold a pipe open, and Run would wait for them.
	transcript, err := os.Create(filepath.Join(t.TempDir(), "transcript"))
	require.NoError(t, err)
	defer transcript.Close()
	cmd.Stdout, cmd.Stderr = transcript, transcript
	cmd.Env = docEnv(filepath.Dir(bin), dir)
	// Its own process group, so that servers the blocks start in the
	// background are stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}

	out, rerr := os.ReadFile(transcript.Name())
	require.NoError(t, rerr)
	// The transcript, cut at the marks.
	parts := strings.Split(string(out), blockMark)
	for i, b := range run {
		if i+1 >= len(parts) {
			break
		}
		got := parts[i+1]
		got = got[strings.IndexByte(got, '\n')+1:]
		last := i+2 >= len(parts)
		if last && err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
			t.Fatalf("%s:%d: the block failed (%v):\n%s\nit printed:\n%s\nserve.log:\n%s", page, b.Line, err, b.Script, got, log)
		}
		if !doctest.Matches(got, b.Output) {
			t.Errorf("%s:%d: the block printed\n%s\nnot what the page shows:\n%s", page, b.Line, got, strings.Join(b.Output, "\n"))
		}
	}
	require.NoError(t, err, "transcript:\n%s", out)
}

// docEnv is the environment the blocks run in: the test's, with the binary
// first on the PATH, temporary files in dir, and none of timetable's or
// AWS's variables but those that lead `--store dynamodb` to the local
// DynamoDB-API server scripts/with-dynamodb.sh started, when there is one.
func docEnv(binDir, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TIMETABLE_") || strings.HasPrefix(name, "AWS_") || name == "PATH" || name == "TMPDIR" {
			continue
		}
		env = append(env, kv)
	}
	if endpoint := os.Getenv(dynamotest.EndpointEnv); endpoint != "" {
		env = append(env, "AWS_ENDPOINT_URL_DYNAMODB="+endpoint, "AWS_REGION="+os.Getenv("AWS_REGION"),
			"AWS_ACCESS_KEY_ID="+os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY="+os.Getenv("AWS_SECRET_ACCESS_KEY"))
	}
	return append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+dir)
}

// needsDynamoDB is the name a block's "needs" gives a DynamoDB-API
// server: there when scripts/with-dynamodb.sh started one.
const needsDynamoDB = "dynamodb"

// missingCommands returns the commands of names not on the PATH, and
// DynamoDB when a block needs it and no server is there.
func missingCommands(names []string) string {
	var missing []string
	for _, name := range names {
		if name == needsDynamoDB {
			if os.Getenv(dynamotest.EndpointEnv) == "" {
				missing = append(missing, "a DynamoDB-API server (scripts/with-dynamodb.sh)")
			}
			continue
		}
		if _, err := exec.LookPath(name); err != nil {
			missing = append(missing, name)
		}
	}
	return strings.Join(missing, ", ")
}

// freePort returns a loopback port no one listens on now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
