package main

import (
	"context"
	"errors"
	"net"
	"net/http"
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
)

// TestQuickStartWaitsForItsOwnServer runs the README's first block, which
// starts the server and waits for it, with port 8080 taken by another
// server: one that accepts connections and answers nothing, and one that
// answers /readyz. The block fails, in bounded time, rather than waiting
// forever or taking the other server for its own.
func TestQuickStartWaitsForItsOwnServer(t *testing.T) {
	bin := build(t)
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the quick start needs %s", tool)
		}
	}
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	blocks, err := doctest.Parse(string(text))
	require.NoError(t, err)
	var start string
	for _, b := range blocks {
		if strings.Contains(b.Script, "timetable serve") {
			start = b.Script
			break
		}
	}
	require.NotEmpty(t, start, "the README's block that starts the server")

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close() // accepts (the kernel does) and answers nothing

	other, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })}
	go func() { _ = srv.Serve(other) }()
	defer srv.Close()

	for name, ln := range map[string]net.Listener{"silent": silent, "another server": other} {
		t.Run(name, func(t *testing.T) {
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+strings.ReplaceAll(start, "8080", port))
			cmd.Dir = dir
			cmd.Env = docEnv(filepath.Dir(bin), dir)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			out, err := cmd.CombinedOutput()
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			}
			require.NoError(t, ctx.Err(), "the wait is bounded: %s", out)
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "the block fails with port %s taken: %v\n%s", port, err, out)
		})
	}
}
