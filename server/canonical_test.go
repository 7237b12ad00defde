package server

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// queryStrings are query strings that decode and that do not.
var queryStrings = []string{"", "a=1", "a=1&b=%20", "%zz", "a=%", "a=%2", "a=%2g", "a=%41%", "a;b", "a=1;b=2",
	"from=now-1h&to=now", "x=%E2%82%AC", "%%41", "a=%4", "&&=&", "a+b=c+d", "=", "%41=%42"}

// TestQueryDecodes checks queryDecodes against url.ParseQuery, whose
// error it stands for.
func TestQueryDecodes(t *testing.T) {
	for _, raw := range queryStrings {
		_, err := url.ParseQuery(raw)
		require.Equal(t, err == nil, queryDecodes(raw), "%q: ParseQuery says %v", raw, err)
	}
}

func FuzzQueryDecodes(f *testing.F) {
	for _, raw := range queryStrings {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := url.ParseQuery(raw)
		if (err == nil) != queryDecodes(raw) {
			t.Fatalf("%q: queryDecodes %v, ParseQuery says %v", raw, queryDecodes(raw), err)
		}
	})
}
