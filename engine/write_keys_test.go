package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyText: every key taken from keyText reads as it was given, across
// chunks and for a key longer than a quarter of one, while later keys
// are written; and the buffer a key was built in can be reused at once.
func TestKeyText(t *testing.T) {
	var k keyText
	var want, got []string
	for i := range 500 {
		s := fmt.Sprintf("acme#cars#car-%d#%d", i, i%3)
		if i%97 == 0 {
			s = strings.Repeat("long", keyChunk/8) + s
		}
		k.buf = append(k.buf[:0], s...)
		got = append(got, k.text(k.buf))
		for j := range k.buf {
			k.buf[j] = '!'
		}
		want = append(want, s)
	}
	require.Equal(t, want, got)
}
