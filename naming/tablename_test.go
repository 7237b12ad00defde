package naming

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidTableName(t *testing.T) {
	tests := map[string]struct {
		name  string
		valid bool
	}{
		"fineo":           {"1491696000000_1492300799000_4_2017", true},
		"aws":             {"timeseries_2018-10-25", true},
		"all characters":  {"azAZ09_.-", true},
		"three":           {"abc", true},
		"255":             {strings.Repeat("a", 255), true},
		"empty":           {"", false},
		"two":             {"ab", false},
		"256":             {strings.Repeat("a", 256), false},
		"space":           {"tt events", false},
		"slash":           {"tt/events", false},
		"colon":           {"tt:events", false},
		"plus":            {"tt+1", false},
		"non-ASCII":       {"tt_évents", false},
		"NUL":             {"tt\x00", false},
		"three multibyte": {"ééé", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidTableName(tc.name)
			if tc.valid {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalidTableName)
			}
		})
	}
}

func TestParseScheme(t *testing.T) {
	for in, want := range map[string]Scheme{"range": Range, "date": Date, " Range ": Range, "DATE": Date} {
		s, err := ParseScheme(in)
		require.NoError(t, err, in)
		require.Equal(t, want, s)
	}
	for _, s := range []Scheme{Range, Date} {
		back, err := ParseScheme(s.String())
		require.NoError(t, err)
		require.Equal(t, s, back)
	}
	for _, in := range []string{"", "fineo", "dates", "aws"} {
		_, err := ParseScheme(in)
		require.ErrorIs(t, err, ErrInvalidNamer, in)
	}
	require.Equal(t, "Scheme(0)", Scheme(0).String())
}
