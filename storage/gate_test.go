package storage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGate(t *testing.T) {
	var g Gate
	require.NoError(t, g.Enter())
	closed := make(chan bool)
	go func() { closed <- g.Close() }()
	// Close waits for the call in progress, and refuses new ones at once.
	require.Eventually(t, g.Closed, 10*time.Second, time.Millisecond)
	require.ErrorIs(t, g.Enter(), ErrClosed)
	select {
	case <-closed:
		t.Fatal("Close returned with a call in progress")
	default:
	}
	g.Exit()
	require.True(t, <-closed, "the first Close")
	require.False(t, g.Close(), "a second Close")
}
