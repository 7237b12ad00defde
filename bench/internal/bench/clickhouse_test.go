package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClickHousePeer writes the peer workload to ClickHouse, asks each
// query a few times with its answer checked, and flushes. The peer
// installs Debian's clickhouse-server as the benchmark does (about 10 MB
// through apt-get, as root); without root and without the package the
// test skips and says what to install.
func TestClickHousePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the whole peer workload")
	}
	if _, err := exec.LookPath("clickhouse-server"); err != nil && os.Geteuid() != 0 {
		t.Skip("clickhouse-server is not installed, and only root may install it: apt-get install clickhouse-server")
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
