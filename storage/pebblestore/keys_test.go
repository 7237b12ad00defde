package pebblestore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeySuccessor(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{1}, []byte{2}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{1, 2, 0xff, 0xff}, []byte{1, 3}},
		{[]byte{0xff}, nil},
	} {
		in := bytes.Clone(tc.in)
		require.Equal(t, tc.want, keySuccessor(in), "%x", tc.in)
		require.Equal(t, tc.in, in, "the argument is left alone")
	}
}

// FuzzItemKey checks the properties Query relies on: an item key splits
// back into its keys; within a partition, keys sort as sort keys do; a
// partition's keys lie within its prefix and its successor, so partitions
// never interleave; tables never interleave.
func FuzzItemKey(f *testing.F) {
	f.Add("p", "a", "p#", "a")
	f.Add("p", "a", "p", "a#")
	f.Add("a", "\xff", "a\xff", "")
	f.Add("", "x", "\x00", "")
	f.Fuzz(func(t *testing.T, pk1, sk1, pk2, sk2 string) {
		const id = 7
		k1 := appendItemKey(nil, id, pk1, sk1)
		k2 := appendItemKey(nil, id, pk2, sk2)

		pk, sk, ok := splitItemKey(k1)
		require.True(t, ok)
		require.Equal(t, pk1, string(pk))
		require.Equal(t, sk1, string(sk))

		if pk1 == pk2 {
			require.Equal(t, strings.Compare(sk1, sk2), bytes.Compare(k1, k2), "sort-key order")
		} else {
			// k2 is outside partition pk1's bounds.
			p1 := appendPartitionPrefix(nil, id, pk1)
			inside := bytes.Compare(k2, p1) >= 0 && bytes.Compare(k2, keySuccessor(p1)) < 0
			require.False(t, inside, "partition %q holds a key of partition %q", pk1, pk2)
		}
		start, end := tableSpan(id)
		require.True(t, bytes.Compare(k1, start) >= 0 && bytes.Compare(k1, end) < 0, "within the table span")
		other := appendItemKey(nil, id+1, pk1, sk1)
		require.True(t, bytes.Compare(other, end) >= 0, "the next table's keys are past the span")
	})
}
