package lineproto

import (
	"strings"
)

// Tag is one tag of a series written as line protocol.
type Tag struct {
	Key, Value string
}

// SeriesTags reads a series back as the tag set Decode wrote it from
// (appendSeries): keys sorted, "key=value" pairs joined by ",", with ",",
// "=" and " " escaped by a backslash. It reports false for a series that
// is not such a tag set (one written through the JSON API, say), and
// true with no tags for the empty series.
func SeriesTags(series string) ([]Tag, bool) {
	if series == "" {
		return nil, true
	}
	var tags []Tag
	var b strings.Builder
	var key string
	inValue := false
	flush := func() bool {
		if !inValue || key == "" || b.Len() == 0 {
			return false
		}
		if n := len(tags); n > 0 && tags[n-1].Key >= key {
			return false // not sorted, or a key twice
		}
		tags = append(tags, Tag{Key: key, Value: b.String()})
		b.Reset()
		inValue = false
		return true
	}
	for i := 0; i < len(series); i++ {
		c := series[i]
		switch {
		case c == '\\' && i+1 < len(series) && (series[i+1] == ',' || series[i+1] == '=' || series[i+1] == ' '):
			i++
			b.WriteByte(series[i])
		case c == '=':
			if inValue || b.Len() == 0 {
				return nil, false
			}
			key = b.String()
			b.Reset()
			inValue = true
		case c == ',':
			if !flush() {
				return nil, false
			}
		case c == ' ':
			return nil, false // line protocol escapes it
		default:
			b.WriteByte(c)
		}
	}
	if !flush() {
		return nil, false
	}
	return tags, true
}
