package lineproto

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeriesTags(t *testing.T) {
	for _, tc := range []struct {
		series string
		tags   []Tag
		ok     bool
	}{
		{"", nil, true},
		{"host=web1", []Tag{{"host", "web1"}}, true},
		{"host=web1,region=eu", []Tag{{"host", "web1"}, {"region", "eu"}}, true},
		{`host=web\ 0,path=a\,b\=c`, []Tag{{"host", "web 0"}, {"path", "a,b=c"}}, true},
		{"car-17", nil, false},
		{"region=eu,host=web1", nil, false}, // not sorted
		{"a=1,a=2", nil, false},
		{"a=", nil, false},
		{"=1", nil, false},
		{"a=1,", nil, false},
		{"a=1=2", nil, false},
		{"a b=1", nil, false},
	} {
		tags, ok := SeriesTags(tc.series)
		require.Equal(t, tc.ok, ok, tc.series)
		require.Equal(t, tc.tags, tags, tc.series)
	}
}

// Every series Decode writes reads back as its tags.
func TestSeriesTagsRoundTrip(t *testing.T) {
	tags := []tag{{"z", "a b"}, {"a", "x,y=z"}, {"m", `back\slash`}}
	s := string(appendSeries(nil, tags))
	got, ok := SeriesTags(s)
	require.True(t, ok, s)
	require.Equal(t, []Tag{{"a", "x,y=z"}, {"m", `back\slash`}, {"z", "a b"}}, got)
}
