package storagetest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSanitise(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"TestPebble/Tables/List", 100, "TestPebble.Tables.List"},
		{"Test/on_demand_without_tags", 100, "Test.on_demand_without_tags"},
		{"Test/non-ASCII é #1", 100, "Test.non-ASCII_____1"}, // é is two bytes,
		{"abcdef", 3, "abc"},
	} {
		require.Equal(t, tc.want, sanitise(tc.in, tc.max), tc.in)
	}
}

func TestTableNamesFitDynamoDB(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)
	s := &suite{run: newRunID(t)}
	t.Run(strings.Repeat("very long subtest name é ", 20), func(t *testing.T) {
		a, b := s.tableName(t), s.tableName(t)
		require.Regexp(t, valid, a)
		require.NotEqual(t, a, b, "every call gives a new name")
		// A tag of up to 60 characters still fits.
		require.Regexp(t, valid, s.prefix(t)+strings.Repeat("x", 60))
	})
}
