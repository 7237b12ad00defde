package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/storage"
)

// guideEvents returns an hour of the guide's event shape for one series:
// a reading a second of four sensor values, each a slow random walk with
// two decimals (in canonical form, as a request's numbers are once
// decoded), a signal strength, and the device's site and model,
// whose row item is about the guide's 180 bytes.
func guideEvents(t *testing.T, series string) []event.Event {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
	vals := []float64{21.5, 48.0, 1013.2, 3.71}
	names := []string{"temperature", "humidity", "pressure", "voltage"}
	var evs []event.Event
	for i := range 3600 {
		fields := map[string]any{}
		for j, name := range names {
			vals[j] += (rng.Float64() - 0.5) * 0.1
			n, err := storage.CanonicalNumber(fmt.Sprintf("%.2f", vals[j]))
			require.NoError(t, err)
			fields[name] = n // canonical, as a decoded event's numbers are
		}
		fields["rssi"] = json.Number(fmt.Sprint(-60 - rng.IntN(20)))
		fields["site"] = "plant-0042/line-07"
		fields["model"] = "th-sensor-x2"
		evs = append(evs, event.Event{Time: start.Add(time.Duration(i) * time.Second), Series: series, Fields: fields})
	}
	ev := evs[0]
	ev.AssignID(sampleTenant, sampleTable, event.LatestIDScheme)
	size := storage.ItemSize(itemenc.RowItem(sampleTenant, sampleTable, ev, 0))
	require.InDelta(t, 180, size, 10, "the guide's 180-byte item")
	return evs
}

// TestChunkDefaultsAreMeasured measures the chunk layout on the guide's
// event shape with package engine/chunk, as `timetable plan --sample`
// does, and holds planner.DefaultChunkExtraBytes and DefaultChunkRatio
// to it.
func TestChunkDefaultsAreMeasured(t *testing.T) {
	evs := guideEvents(t, "sensor-00001")
	fixed, per, err := chunkSizes(evs, sampleTenant, sampleTable)
	require.NoError(t, err)
	ev := evs[0]
	ev.AssignID(sampleTenant, sampleTable, event.LatestIDScheme)
	row := float64(storage.ItemSize(itemenc.RowItem(sampleTenant, sampleTable, ev, 0)))
	t.Logf("measured: a chunk of one event %.1f bytes (its row %.0f), %.2f bytes each more event", fixed+per, row, per)
	require.InDelta(t, fixed+per-row, planner.DefaultChunkExtraBytes, 3)
	require.InEpsilon(t, per/row, planner.DefaultChunkRatio, 0.05)

	_, _, err = chunkSizes(guideEvents(t, "sensor-00002")[:1], sampleTenant, sampleTable)
	require.ErrorContains(t, err, "two events of one series")
}
