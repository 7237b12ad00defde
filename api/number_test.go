package api

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// This package's number check is event's, which it cannot import.
func TestIsJSONNumberIsEvent(t *testing.T) {
	for _, s := range []string{"", "0", "-0", "01", "1.", "1.5", "-1.5e-7", "1e", "1E+2", "-", "+1", ".5", "1..2", "NaN", " 1", "12345678901234567890.123456789", "-0.0e-0", "1e+", "0x1"} {
		require.Equal(t, event.IsJSONNumber(s), isJSONNumber(s), "%q", s)
	}
}
