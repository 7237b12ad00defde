package bench

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClickHousePeer writes the peer workload to ClickHouse, asks each
// query a few times with its answer checked, and flushes, when
// clickhouse-server is installed: the benchmark installs it, a test does
// not.
func TestClickHousePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the whole peer workload")
	}
	if _, err := exec.LookPath("clickhouse-server"); err != nil {
		t.Skip("clickhouse-server is not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := &clickhousePeer{}
	d, err := p.start(ctx, dir, func(s string) { t.Log(s) })
	if d != nil {
		t.Cleanup(func() { require.NoError(t, d.Stop()) })
	}
	require.NoError(t, err)
	t.Cleanup(p.close)
	require.Equal(t, "18.16.1", p.version())
	empty, err := diskUsage(p.dataDir())
	require.NoError(t, err)

	w := newPeerWorkload(time.Now())
	for _, b := range w.batches(peerBatch) {
		require.NoError(t, p.write(b)(ctx))
	}
	require.NoError(t, waitVisible(ctx, p, w))
	for _, q := range peerQueries {
		for rep := range 5 {
			_, err := q.run(ctx, p, w, rep)
			if errors.Is(err, errNotAsked) {
				break
			}
			require.NoError(t, err, q.name)
		}
	}
	require.NoError(t, p.flush(ctx))
	disk, err := diskUsage(p.dataDir())
	require.NoError(t, err)
	require.Greater(t, disk, empty)
}
