package engine

import "strings"

// keyText holds the text of the keys of a write's items: a request's
// keys are copied into chunks of keyChunk bytes and each key is a
// substring of its chunk, one allocation for some fifty keys rather than
// one a key. A chunk lives as long as any key taken from it: the keys of
// one write, which end with it.
type keyText struct {
	chunk strings.Builder
	buf   []byte // where a key is built before it is copied
}

// keyChunk is the size of keyText's chunks.
const keyChunk = 4096

// text returns b as a string, copied into the current chunk, or into a
// string of its own when it is longer than a quarter of a chunk.
func (k *keyText) text(b []byte) string {
	if len(b) > keyChunk/4 {
		return string(b)
	}
	if k.chunk.Len()+len(b) > k.chunk.Cap() {
		// Start a new chunk; the keys taken from the old one keep it.
		k.chunk = strings.Builder{}
		k.chunk.Grow(keyChunk)
	}
	start := k.chunk.Len()
	k.chunk.Write(b)
	return k.chunk.String()[start:]
}
