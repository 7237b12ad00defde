package bench

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClickHousePeer measures ClickHouse as the peer comparison does,
// every answer checked, when clickhouse-server is installed: the
// benchmark installs it, a test does not.
func TestClickHousePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the whole peer workload")
	}
	if _, err := exec.LookPath("clickhouse-server"); err != nil {
		t.Skip("clickhouse-server is not installed")
	}
	w := newPeerWorkload(time.Now())
	res, err := measurePeer(context.Background(), &clickhousePeer{}, t.TempDir(), w, w.batches(peerBatch), "", func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Positive(t, res.ingest)
	require.Positive(t, res.disk)
	require.Equal(t, "18.16.1", res.version)
}
