package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A catalog snapshot keeps one listing per family, the first kept of each.
func TestCatalogSnapshotKeepsEachFamily(t *testing.T) {
	var s catalogSnapshot
	a, b, c := &listing{version: 1}, &listing{version: 2}, &listing{version: 3}
	require.Nil(t, s.of("a"))
	s.keep("a", a)
	require.Same(t, a, s.of("a"))
	require.Nil(t, s.of("b"))
	s.keep("b", b)
	s.keep("c", c)
	require.Same(t, a, s.of("a"))
	require.Same(t, b, s.of("b"))
	require.Same(t, c, s.of("c"))
	require.Nil(t, s.of(""))
}
