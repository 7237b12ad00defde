package event

import (
	"maps"
	"testing"
	"time"
)

// AppendFields gives the fields Fields gives, in a list in bytewise
// order of their names, nested values included; nothing for an event
// without fields.
func TestAppendFieldsAsFields(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	body := `{"series":"s","time":"2026-12-06T10:00:00Z","fields":{"z":1,"a":"x","m":{"k":[1,"2",null,true]},"b":2.50}}
{"series":"s","time":"2026-12-06T10:00:01Z","fields":{}}
{"series":"s","time":"2026-12-06T10:00:02Z"}
`
	b, err := DecodeNDJSON([]byte(body), Limits{}, now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Len() {
		list := b.AppendFields([]Field{{Name: "before"}}, i)[1:]
		want := b.Fields(i)
		if len(list) != len(want) {
			t.Fatalf("event %d: %d fields in the list, %d in the map", i, len(list), len(want))
		}
		got := map[string]any{}
		for k, f := range list {
			if k > 0 && list[k-1].Name >= f.Name {
				t.Fatalf("event %d: %q after %q", i, f.Name, list[k-1].Name)
			}
			got[f.Name] = f.Value
		}
		if len(want) > 0 && !maps.EqualFunc(got, want, func(a, b any) bool {
			return string(appendHashValue(nil, a, true)) == string(appendHashValue(nil, b, true))
		}) {
			t.Fatalf("event %d: %v, not %v", i, got, want)
		}
	}
	if n := len(b.AppendFields(nil, 0)); n != 4 {
		t.Fatalf("%d fields, not 4", n)
	}
}
