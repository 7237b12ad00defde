package lifecycle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
)

// TestPlanCompact says which tables of a family the plan compacts: a
// chunk family's table once it has left the hot tier, once; never a
// hot one, a backfill's or a row family's (one with ttl too: its chunks
// keep an expiry); and a table
// left fenced by a compaction that stopped, whatever the family.
func TestPlanCompact(t *testing.T) {
	chunks := family.Default()
	chunks.Layout, chunks.ChunkWindow = family.LayoutChunk, time.Hour
	rows := family.Default()
	rows.Layout = family.LayoutRow
	withTTL := chunks
	withTTL.TTL = 24 * 30 * time.Hour
	written := "2026-03-02T10:00:00Z" // a Monday; weeks from Sunday
	warm := at("2026-03-09T12:00:00Z")
	tests := []struct {
		name  string
		f     family.Family
		now   time.Time
		entry func(e *registry.Entry)
		want  bool
	}{
		{"hot", chunks, at("2026-03-05T12:00:00Z"), nil, false},
		{"warm", chunks, warm, nil, true},
		{"cold", chunks, at("2026-03-20T12:00:00Z"), nil, true},
		{"compacted after it settled", chunks, warm, func(e *registry.Entry) { e.ChunkedAt = at("2026-03-09T01:00:00Z") }, false},
		{"compacted while it took writes", chunks, warm, func(e *registry.Entry) { e.ChunkedAt = at("2026-03-04T01:00:00Z") }, true},
		{"row family", rows, warm, nil, false},
		{"row table of a family made chunk since", chunks, warm, func(e *registry.Entry) { e.Policy.Layout, e.Policy.ChunkWindow = family.LayoutRow, 0 }, false},
		{"ttl", withTTL, warm, nil, true},
		{"left fenced, row family", rows, warm, func(e *registry.Entry) { e.FencedAt = at("2026-03-09T11:00:00Z") }, true},
		{"not active", chunks, warm, func(e *registry.Entry) { e.State = registry.Archived }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := table(tt.f, written, written, "hot")
			tb.Entry = registry.NewEntry(tt.f, tb.Ref, at(written))
			tb.Entry.State = registry.Active
			tb.Policy = tt.f
			if tt.entry != nil {
				tt.entry(&tb.Entry)
			}
			var got []lifecycle.Action
			for _, a := range lifecycle.Plan(tt.now, []family.Family{tt.f}, []lifecycle.Table{tb}) {
				if a.Kind == lifecycle.Compact {
					got = append(got, a)
				}
			}
			if !tt.want {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			require.Equal(t, tb.Name, got[0].Table)
			require.NotEmpty(t, got[0].Reason)
		})
	}

	// A backfill, made after its week ended, is not compacted while it
	// is on the backfill tier, and is once it leaves it.
	tb := table(chunks, written, "2026-03-10T10:00:00Z", "backfill")
	tb.Entry = registry.NewEntry(chunks, tb.Ref, tb.CreatedAt)
	tb.Entry.State, tb.Policy = registry.Active, chunks
	count := func(now time.Time) int {
		n := 0
		for _, a := range lifecycle.Plan(now, []family.Family{chunks}, []lifecycle.Table{tb}) {
			if a.Kind == lifecycle.Compact {
				n++
			}
		}
		return n
	}
	require.Zero(t, count(at("2026-03-20T12:00:00Z")), "on the backfill tier")
	require.Equal(t, 1, count(at("2026-04-02T12:00:00Z")), "past the backfill tier")
}
