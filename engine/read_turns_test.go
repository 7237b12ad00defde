package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tenant's aggregates of every series summarise at most size series at
// once between them; another tenant's are not held up by them.
func TestSeriesTurns(t *testing.T) {
	turns := newSeriesTurns(2)
	ctx := context.Background()
	a1, err := turns.wait(ctx, "acme")
	require.NoError(t, err)
	a2, err := turns.wait(ctx, "acme")
	require.NoError(t, err)
	g, err := turns.wait(ctx, "globex")
	require.NoError(t, err, "another tenant's turn")
	g()

	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err = turns.wait(short, "acme")
	require.ErrorIs(t, err, context.DeadlineExceeded, "acme holds its two turns")

	got := make(chan error)
	go func() {
		done, err := turns.wait(ctx, "acme")
		if err == nil {
			done()
		}
		got <- err
	}()
	a1()
	require.NoError(t, <-got, "a turn given back lets the next in")
	a2()
}
