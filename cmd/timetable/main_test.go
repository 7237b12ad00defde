package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// built is the binary the tests run, compiled once for all of them: a
// link of the binary costs seconds of CPU, and six tests run it.
var built struct {
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
}

// TestMain removes the binary when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// build compiles the binary into a temporary directory, the first time a
// test asks for it, and returns it. The tests only run it: none changes
// the file.
func build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "timetable-bin")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "timetable")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	require.NoError(t, built.err, "go build: %s", built.out)
	return built.bin
}

// exitCode runs the binary and returns its exit status and error output.
func exitCode(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stderr.String()
}

func TestBinary(t *testing.T) {
	bin := build(t)
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")

	code, stderr := exitCode(t, bin, "bogus")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `timetable: unknown command "bogus"`)
	code, _ = exitCode(t, bin, "tenant", "add", "acme", store)
	require.Equal(t, 0, code)

	// serve runs until SIGTERM, then stops cleanly with status 0.
	serve := exec.Command(bin, "serve", store, "--addr", "127.0.0.1:0", "--log-format", "json")
	logs, err := serve.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, serve.Start())
	defer serve.Process.Kill()
	lines := bufio.NewScanner(logs)
	addr := ""
	for addr == "" && lines.Scan() {
		var rec map[string]any
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec["msg"] == "serving the HTTP API" {
			addr, _ = rec["addr"].(string)
		}
	}
	require.NotEmpty(t, addr, "serve never said where it listens")
	res, err := http.Get(addr + "/healthz")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	// The store is the server's while it runs.
	code, stderr = exitCode(t, bin, "tables", store)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "is in use, is `timetable serve` running?")

	require.NoError(t, serve.Process.Signal(syscall.SIGTERM))
	rest, err := io.ReadAll(logs)
	require.NoError(t, err)
	require.NoError(t, serve.Wait(), "serve exits with status 0 on SIGTERM")
	require.Contains(t, string(rest), "stopped: the store is closed")

	code, stderr = exitCode(t, bin, "tables", store)
	require.Equal(t, 0, code, "the store is free again: %s", stderr)
}
