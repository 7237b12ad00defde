package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDaemon runs a shell whose child spends CPU and exits: its time
// counts once the shell has reaped it, and Stop ends the shell.
func TestDaemon(t *testing.T) {
	dir := t.TempDir()
	d, err := startDaemon("sh", dir, syscall.SIGTERM, nil, nil, "/bin/sh", "-c",
		`(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done); touch spent; exec sleep 60`)
	require.NoError(t, err)
	t.Cleanup(func() { d.Stop() })
	require.NoError(t, d.waitReady(context.Background(), time.Minute, func(context.Context) error {
		_, err := os.Stat(filepath.Join(dir, "spent"))
		return err
	}))
	cpu, err := d.CPU()
	require.NoError(t, err)
	require.Positive(t, cpu)
	mem, err := d.PeakMemory()
	require.NoError(t, err)
	require.Positive(t, mem)
	require.NoError(t, d.Stop())
	<-d.exited
	require.NoError(t, d.Stop(), "a second Stop")
}

func TestDaemonExitsBeforeReady(t *testing.T) {
	d, err := startDaemon("false", t.TempDir(), syscall.SIGTERM, nil, nil, "/bin/false")
	require.NoError(t, err)
	err = d.waitReady(context.Background(), time.Minute, func(context.Context) error { return errors.New("not yet") })
	require.ErrorContains(t, err, "exited before it was ready")
}

func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), make([]byte, 1<<20), 0o666))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "b", "c"), 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b", "c", "d"), make([]byte, 1<<20), 0o666))
	n, err := diskUsage(dir)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(2<<20))
}
