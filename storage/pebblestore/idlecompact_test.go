package pebblestore

import (
	"context"
	"github.com/cockroachdb/pebble/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIdleCompaction(t *testing.T) {
	span := func(smallest, largest string, size uint64) fileSpan {
		return fileSpan{smallest: []byte(smallest), largest: []byte(largest), size: size}
	}
	for _, tc := range []struct {
		name       string
		levels     [][]fileSpan
		start, end string
		ok         bool
	}{
		{name: "no sstables"},
		{name: "nothing in L0", levels: [][]fileSpan{nil, nil, {span("a", "z", 100)}}},
		{
			name:   "L0 alone: its span",
			levels: [][]fileSpan{{span("d", "f", 10), span("b", "c", 10), span("e", "m", 10)}},
			start:  "b", end: "m\x00", ok: true,
		},
		{
			name:   "one key: a span that holds it",
			levels: [][]fileSpan{{span("k", "k", 10)}},
			start:  "k", end: "k\x00", ok: true,
		},
		{
			name: "what lies below within the ratio",
			levels: [][]fileSpan{
				{span("c", "f", 10)},
				nil,
				{span("a", "b", 1000), span("b", "d", 50)},
				{span("f", "h", 50), span("i", "z", 1000)},
			},
			start: "c", end: "f\x00", ok: true,
		},
		{
			name: "more than the ratio below: left to Pebble",
			levels: [][]fileSpan{
				{span("c", "f", 10)},
				{span("a", "d", 60), span("e", "z", 41)},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, end, ok := idleCompaction(tc.levels, 10)
			require.Equal(t, tc.ok, ok)
			if ok {
				require.Equal(t, tc.start, string(start))
				require.Equal(t, tc.end, string(end))
			}
		})
	}
}

// TestSettleShrinksTheFlushed: the same events, written in two flushes,
// take less disk settled (flushed, and what the flushes wrote compacted)
// than flushed alone. Pebble's own compactions are off, as in an idle
// store, which has nothing to make Pebble compact.
func TestSettleShrinksTheFlushed(t *testing.T) {
	ctx := context.Background()
	const events = 2 << 20
	sizes := make(map[bool]int64)
	for _, settle := range []bool{false, true} {
		dir := t.TempDir()
		s, err := open(dir, Options{IdleFlush: -1}, func(o *pebble.Options) { o.DisableAutomaticCompactions = true })
		require.NoError(t, err)
		writeEvents(t, s, "tt_events_2026-11-21", events)
		require.NoError(t, s.db.Flush())
		writeEvents(t, s, "tt_events_2026-11-22", events)
		if settle {
			require.NoError(t, s.settle(ctx))
		} else {
			require.NoError(t, s.db.Flush())
		}
		require.NoError(t, s.Close())
		_, sizes[settle] = filesBySuffix(t, dir)
	}
	t.Logf("sstables: %.2f MiB flushed, %.2f MiB settled", mib(sizes[false]), mib(sizes[true]))
	require.Less(t, sizes[true], sizes[false]*3/4, "settled sstables against flushed ones")
}
