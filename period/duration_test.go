package period_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/period"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "90d": 90 * 24 * time.Hour, "12w": 12 * 7 * 24 * time.Hour, "36h": 36 * time.Hour, "15m": 15 * time.Minute} {
		got, err := period.ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := period.ParseDuration("3 days")
	require.Error(t, err)
}
