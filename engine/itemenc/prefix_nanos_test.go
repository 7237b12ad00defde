package itemenc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrefixNanosReadsAsParseTimePrefix: TimeKeys.PrefixNanos, which
// reads a day once, reads every prefix of keys of one day and of others
// as ParseTimePrefix does, in any order, and refuses what it refuses.
func TestPrefixNanosReadsAsParseTimePrefix(t *testing.T) {
	keys := []string{"2026-11-05T13:00:00.000000000Z", "2026-11-05T14:30:00.000000000Z", "2026-11-06T00:00:00.000000001Z",
		"2024-02-29T23:59:59.999999999Z", "2023-02-29T10:00:00.000000000Z", "2026-11-05T24:00:00.000000000Z", "2026-11-05T1x:00:00.000000000Z"}
	var prefixes []string
	for _, k := range keys {
		for n := 0; n <= len(k); n++ {
			prefixes = append(prefixes, k[:n])
		}
	}
	prefixes = append(prefixes, keys[0]+"0", "2026-11-05T13\"")
	var c TimeKeys
	for round := range 2 {
		for _, p := range prefixes {
			want, wantOK := ParseTimePrefix(p)
			got, ok := c.PrefixNanos(p)
			require.Equal(t, wantOK, ok, "round %d: %q", round, p)
			if ok {
				require.Equal(t, want.UnixNano(), got, "round %d: %q", round, p)
			}
		}
	}
}
