package gcfloor_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/gcfloor"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, headroom uint64
		percent, want  int
	}{
		{12 << 20, 64 << 20, 100, 534}, // a small live heap: 64 MiB past it
		{64 << 20, 64 << 20, 100, 100}, // GOGC's own goal is as far
		{256 << 20, 64 << 20, 100, 100},
		{16 << 20, 64 << 20, 500, 500}, // never below the GOGC it began with
		{0, 64 << 20, 100, 1<<31 - 1},  // nothing live: as far as GOGC goes
	} {
		require.Equal(t, c.want, gcfloor.Percent(c.live, c.headroom, c.percent), "live %d", c.live)
	}
}

// After a collection of a small heap the floor raises GOGC so that the
// next one starts its headroom past the live heap; Stop puts GOGC back.
func TestFloorRaisesGOGCAfterACollection(t *testing.T) {
	if _, given := os.LookupEnv("GOGC"); given {
		t.Skip("GOGC is given: the floor leaves it as it is")
	}
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	f := gcfloor.Start(1 << 40) // far more than this test's live heap
	require.NotNil(t, f)
	defer f.Stop()
	require.Eventually(t, func() bool {
		runtime.GC()
		return f.GOGC() > 100
	}, 10*time.Second, 10*time.Millisecond, "the finalizer after a collection raises GOGC")
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	require.Equal(t, f.GOGC(), p, "the runtime's GOGC is the floor's")
	f.Stop()
	p = debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	require.Equal(t, 100, p, "Stop puts GOGC back")
}

// An operator's GOGC stands: the floor does not start.
func TestFloorLeavesAGivenGOGC(t *testing.T) {
	t.Setenv("GOGC", "200")
	require.Nil(t, gcfloor.Start(0))
}

// Two floors at once (two servers in one process): GOGC is set back when
// the last one stops, to what it was before the first.
func TestOverlappingFloors(t *testing.T) {
	if _, given := os.LookupEnv("GOGC"); given {
		t.Skip("GOGC is given: the floor leaves it as it is")
	}
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	a := gcfloor.Start(1 << 40)
	require.Eventually(t, func() bool {
		runtime.GC()
		return a.GOGC() > 100
	}, 10*time.Second, 10*time.Millisecond)
	b := gcfloor.Start(1 << 40)
	a.Stop()
	b.Stop()
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	require.Equal(t, 100, p)
}
