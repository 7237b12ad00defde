package storage_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// A clone equals its value and shares none of its memory: changing the
// buffer a value was read from leaves the clone as it was.
func TestCloneValue(t *testing.T) {
	buf := []byte("name42.5bytes")
	view := string(buf) // a copy here; the []byte below shares buf
	v := map[string]any{
		"s": view[:4], "n": json.Number(view[4:8]), "b": buf[8:],
		"l": []any{nil, true, buf[8:10]}, "m": map[string]any{"k": json.Number("1")},
	}
	c := storage.CloneValue(v)
	require.Equal(t, v, c)
	copy(buf, "XXXXXXXXXXXXX")
	require.Equal(t, []byte("bytes"), c.(map[string]any)["b"])
	require.Equal(t, []byte("by"), c.(map[string]any)["l"].([]any)[2])
	require.Equal(t, "name", c.(map[string]any)["s"])
}
