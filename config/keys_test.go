package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
)

// TestUnknownKey: a key the file does not take is named with where it is
// and the keys close to it, not the decoder's Go types.
func TestUnknownKey(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"familes:\n  - {name: x}\n", "line 1: unknown key familes at the top level, did you mean families?"},
		{"families:\n  - name: x\n    shard: 2\n", "line 3: unknown key shard in families, did you mean shards?"},
		{"families:\n  - name: x\n    tiers:\n      - {name: hot, wirte: 5}\n", "line 4: unknown key wirte in families.tiers, did you mean write?"},
		{"limits:\n  tenant: {max_concurent_queries: 3}\n", "unknown key max_concurent_queries in limits.tenant, did you mean max_concurrent_queries?"},
		{"key_cache: {zzz: 1}\n", "unknown key zzz in key_cache (its keys: ttl, negative_ttl, size)"},
	} {
		_, err := config.Parse([]byte(tc.yaml))
		require.ErrorIs(t, err, config.ErrInvalid)
		require.ErrorContains(t, err, tc.want)
		require.NotContains(t, err.Error(), "config.file", "no Go type")
		require.NotContains(t, err.Error(), "not found in type")
	}
}
