package storage_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// TestParseClass: the canonical names read back as the classes they
// name, the aliases of earlier versions read as infrequent_access, and
// anything else is refused with the names to use.
func TestParseClass(t *testing.T) {
	for in, want := range map[string]storage.Class{
		"":                           "",
		"standard":                   storage.ClassStandard,
		"STANDARD":                   storage.ClassStandard,
		"infrequent_access":          storage.ClassInfrequentAccess,
		"Infrequent_Access":          storage.ClassInfrequentAccess,
		"standard_ia":                storage.ClassInfrequentAccess,
		"standard_infrequent_access": storage.ClassInfrequentAccess,
		"STANDARD_INFREQUENT_ACCESS": storage.ClassInfrequentAccess,
	} {
		got, err := storage.ParseClass(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, c := range []storage.Class{storage.ClassStandard, storage.ClassInfrequentAccess} {
		got, err := storage.ParseClass(c.Name())
		require.NoError(t, err)
		require.Equal(t, c, got, "Name reads back as the class it names")
	}
	require.Equal(t, "standard", storage.Class("").Name())
	require.Equal(t, "infrequent_access", storage.ClassInfrequentAccess.Name())
	_, err := storage.ParseClass("glacier")
	require.EqualError(t, err, `class "glacier": must be standard or infrequent_access`)
}
