package event

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/timetabledb/timetable/storage"
)

// shortCanonical takes a number only when storage.CanonicalNumber
// returns it as it is, so that appendNumber's shortcut gives what the
// storage package does: checked on hand-picked numbers and on random
// strings of a number's characters.
func TestShortCanonicalAgreesWithStorage(t *testing.T) {
	cases := []string{"0", "-0", "1", "-1", "10", "0.5", "-0.5", "0.50", "0.0", "00", "01", "1.", ".5", "-", "", "1e5", "1E5", "21.5",
		"1013.25", "-40", "3.001", "100.000", "12345678901234567890", "1234567890123456789", "0.0000000000000000001", "-0.000000000000000001",
		"1.5x", "1..5", "--1", "+1", "1-"}
	r := rand.New(rand.NewPCG(3, 4))
	const chars = "0123456789.-eE+"
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(22) {
			b.WriteByte(chars[r.IntN(len(chars))])
		}
		cases = append(cases, b.String())
	}
	took := 0
	for _, s := range cases {
		got := shortCanonical(s)
		c, err := storage.CanonicalNumber(s)
		want := err == nil && string(c) == s
		if got && !want {
			t.Fatalf("shortCanonical(%q) is true; storage gives %q, %v", s, c, err)
		}
		if !got && want && len(s) <= shortNumber && !strings.ContainsAny(s, "eE+") {
			t.Fatalf("shortCanonical(%q) is false for a short canonical number", s)
		}
		if got {
			took++
			b, reason := appendNumber([]byte("x"), s)
			if reason != "" || string(b) != "x"+s {
				t.Fatalf("appendNumber(%q) = %q, %q", s, b, reason)
			}
		}
	}
	if took < 100 {
		t.Fatalf("only %d of the numbers taken", took)
	}
}
