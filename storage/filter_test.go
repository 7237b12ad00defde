package storage_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// AppendAttrs names each attribute a filter reads once, after those the
// slice holds.
func TestFilterAppendAttrs(t *testing.T) {
	f := storage.Filter{Op: storage.FilterOr, Args: []storage.Filter{
		{Op: storage.FilterAnd, Args: []storage.Filter{
			{Op: storage.FilterGt, Attr: "speed", Value: json.Number("3")},
			{Op: storage.FilterExists, Attr: "gear"},
		}},
		{Op: storage.FilterNot, Args: []storage.Filter{{Op: storage.FilterBeginsWith, Attr: "speed", Value: "x"}}},
	}}
	require.Equal(t, []string{"speed", "gear"}, f.AppendAttrs(nil))
	require.Equal(t, []string{"gear", "odo", "speed"}, f.AppendAttrs([]string{"gear", "odo"}))
}
