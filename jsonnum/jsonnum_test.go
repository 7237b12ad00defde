package jsonnum

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Valid agrees with encoding/json on what a number literal is.
func TestValidIsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "0", "-0", "01", "1.", "1.5", "-1.5e-7", "1e", "1E+2", "-", "+1", ".5", "1..2", "NaN", " 1", "12345678901234567890.123456789", "-0.0e-0", "1e+", "0x1", "1_0", "0x1p4"} {
		var n json.Number
		want := json.Unmarshal([]byte(s), &n) == nil && string(n) == s
		require.Equal(t, want, Valid(s), "%q", s)
	}
}
