package compact_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestCompactKeepsExpiry compacts a table of a family with ttl, written
// one event at a time in the chunk and the row layout, and requires each
// chunk packed to expire when the newest of its window's events would
// have (the latest of its items' expiries), except in a window holding
// an event written before the family set its ttl: that event's item had
// no expiry, so the window's chunk has none. Reads answer as before. On
// every backend.
func TestCompactKeepsExpiry(t *testing.T) {
	const ttl = 30 * 24 * time.Hour
	for _, b := range backends.All(t) {
		for _, layout := range []family.Layout{family.LayoutChunk, family.LayoutRow} {
			t.Run(b.Name+"/"+string(layout), func(t *testing.T) {
				f := open(t, b, layout, 1)
				evs := events()
				// An event of s2 in the first window, before the ttl.
				early := event.Event{Time: day.Add(30*time.Minute + time.Second), Series: "s2", Fields: map[string]any{"v": json.Number("7")}}
				f.writeOneByOne(t, []event.Event{early})
				f.cfg.Families[0].TTL = ttl
				f.reopen(t)
				f.writeOneByOne(t, evs)
				before := f.answers(t)

				_, err := f.compactEntry(t, f.store)
				require.NoError(t, err)
				table := f.entry(t).Name
				it := f.store.Scan(context.Background(), table)
				defer it.Close()
				chunks := 0
				for it.Next() {
					item := it.Item()
					if !chunk.IsSortKey(item.SK) {
						continue
					}
					chunks++
					in, err := chunk.Unpack(nil, item)
					require.NoError(t, err)
					window := chunk.WindowStart(in[0].Time, time.Hour)
					if in[0].Series == "s2" && window.Equal(day) {
						require.NotContains(t, item.Attrs, family.TTLAttribute, "an item of the window had no expiry")
						continue
					}
					newest := in[len(in)-1].Time
					require.Equal(t, json.Number(strconv.FormatInt(newest.Add(ttl).Unix(), 10)), item.Attrs[family.TTLAttribute],
						"chunk %s %s expires with its newest event", item.PK, item.SK)
				}
				require.NoError(t, it.Err())
				require.Greater(t, chunks, 3)

				f.reopen(t)
				require.Equal(t, before, f.answers(t), "every read answers as before")
			})
		}
	}
}
