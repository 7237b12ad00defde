package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

// Zero means the default; a negative value is an error, not a default.
func TestOptions(t *testing.T) {
	var o server.Options
	require.NoError(t, o.Validate())
	o.EnsureDefaults()
	require.Equal(t, int64(server.DefaultMaxBodyBytes), o.MaxBodyBytes)
	require.Equal(t, server.DefaultShutdownTimeout, o.ShutdownTimeout)
	require.NotNil(t, o.Logger)

	bad := server.Options{MaxEvents: -1, ShutdownTimeout: -time.Second}
	err := bad.Validate()
	require.ErrorContains(t, err, "MaxEvents is negative")
	require.ErrorContains(t, err, "ShutdownTimeout is negative")
	_, err = server.New(nil, bad)
	require.ErrorContains(t, err, "invalid server options")
}
