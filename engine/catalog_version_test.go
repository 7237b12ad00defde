package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVersionReadsShareOnlyLaterReads checks the rule of versionReads: a
// caller that arrives while a read is in flight does not take its
// answer, but shares, with the others that arrived meanwhile, one read
// that begins after them; so a version raised before a caller arrived is
// what it sees, and many callers make two reads.
func TestVersionReadsShareOnlyLaterReads(t *testing.T) {
	var vr versionReads
	var version, reads atomic.Int64
	release := make(chan struct{})
	began := make(chan struct{}, 16)
	read := func(ctx context.Context) (int64, error) {
		reads.Add(1)
		v := version.Load() // the version as the read finds it
		began <- struct{}{}
		<-release
		return v, nil
	}
	ctx := context.Background()

	first := make(chan int64)
	go func() {
		v, err := vr.read(ctx, read)
		require.NoError(t, err)
		first <- v
	}()
	<-began // the first read is in flight, and has read version 0

	version.Store(1) // raised while it runs: the callers below must see it
	const n = 8
	var wg sync.WaitGroup
	got := make([]int64, n)
	for i := range n {
		wg.Go(func() {
			v, err := vr.read(ctx, read)
			require.NoError(t, err)
			got[i] = v
		})
	}
	// Wait until every caller waits on the first read, having joined
	// the next one.
	require.Eventually(t, func() bool {
		vr.mu.Lock()
		defer vr.mu.Unlock()
		return vr.next != nil && vr.next.joined == n
	}, 5*time.Second, time.Millisecond)
	close(release)
	require.Equal(t, int64(0), <-first, "the first caller's read began before the raise")
	wg.Wait()
	for i, v := range got {
		require.Equal(t, int64(1), v, "caller %d arrived after the raise", i)
	}
	require.Equal(t, int64(2), reads.Load(), "the callers that waited shared one read")

	// A caller whose context ends stops waiting; the read goes on for
	// the others.
	vr2 := versionReads{}
	hold := make(chan struct{})
	go func() { _, _ = vr2.read(ctx, func(context.Context) (int64, error) { <-hold; return 7, nil }) }()
	require.Eventually(t, func() bool { vr2.mu.Lock(); defer vr2.mu.Unlock(); return vr2.inflight != nil }, 5*time.Second, time.Millisecond)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := vr2.read(cctx, func(context.Context) (int64, error) { return 8, nil })
	require.ErrorIs(t, err, context.Canceled)
	close(hold)
	v, err := vr2.read(ctx, func(context.Context) (int64, error) { return 9, nil })
	require.NoError(t, err)
	require.Contains(t, []int64{8, 9}, v, "a read after the first one")
}
