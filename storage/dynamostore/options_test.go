package dynamostore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"set", Options{MaxAttempts: 3, WriteConcurrency: 2, WaitMinDelay: time.Second, WaitMaxDelay: time.Second}, true},
		{"negative attempts", Options{MaxAttempts: -1}, false},
		{"negative concurrency", Options{WriteConcurrency: -1}, false},
		{"negative backoff", Options{MaxBackoff: -time.Second}, false},
		{"min above max", Options{WaitMinDelay: 2 * time.Second, WaitMaxDelay: time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, errInvalidOptions)
			}
		})
	}
}

func TestOptionsWaitDefaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		local    bool
		min, max time.Duration
	}{
		{"AWS", Options{}, false, DefaultWaitMinDelay, DefaultWaitMaxDelay},
		{"local endpoint", Options{}, true, DefaultLocalWaitMinDelay, DefaultLocalWaitMaxDelay},
		{"explicit", Options{WaitMinDelay: time.Second, WaitMaxDelay: 3 * time.Second}, true, time.Second, 3 * time.Second},
		{"only max, below the default min", Options{WaitMaxDelay: time.Second}, false, time.Second, time.Second},
		{"only min, above the default max", Options{WaitMinDelay: time.Minute}, false, time.Minute, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.ensureDefaults(tc.local)
			require.Equal(t, tc.min, o.WaitMinDelay)
			require.Equal(t, tc.max, o.WaitMaxDelay)
			require.NoError(t, o.Validate())
			require.Equal(t, DefaultWriteConcurrency, o.WriteConcurrency)
			require.NotNil(t, o.Logger)
		})
	}
}
