package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	require.Equal(t, "0 shards", count(0, "shard"))
	require.Equal(t, "1 shard", count(1, "shard"))
	require.Equal(t, "2 bad lines", count(2, "bad line"))
}
