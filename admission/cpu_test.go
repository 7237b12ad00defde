package admission_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
)

// The pool has one slot fewer than GOMAXPROCS, at least one.
func TestCPUSlots(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 1, 2: 1, 3: 2, 8: 7} {
		runtime.GOMAXPROCS(procs)
		require.Equal(t, want, admission.CPUSlots(), "GOMAXPROCS %d", procs)
		requireSlots(t, admission.NewCPU(0), want)
	}
	requireSlots(t, admission.NewCPU(3), 3)
}

// requireSlots checks that cpu lends want slots at once and no more: the
// next Acquire waits until its context ends. The waits run on the fake
// clock of a synctest bubble.
func requireSlots(t *testing.T, cpu *admission.CPU, want int) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range want {
			_, err := cpu.Acquire(ctx)
			require.NoError(t, err, "slot %d of %d", i+1, want)
		}
		_, err := cpu.Acquire(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "a pool of %d slots lends no more", want)
	})
}

// However many goroutines do heavy work, they never hold more than the
// pool's slots at once, each slot given back is taken again, and a
// release called twice gives back one slot. The pool publishes its
// slots, those held and those taken as metrics.
func TestCPUAccounting(t *testing.T) {
	cpu := admission.NewCPU(3)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				release, err := cpu.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if held := cpu.Held(); held > 3 || held < 1 {
					t.Errorf("%d slots held", held)
				}
				runtime.Gosched()
				release()
				release()
			}
		})
	}
	wg.Wait()
	require.Zero(t, cpu.Held(), "every slot given back")
	require.Equal(t, 32*50, cpu.Taken(), "a slot taken per Acquire")

	// A full pool: the next waits until its context ends, or until a
	// slot is given back.
	var held []func()
	for range 3 {
		release, err := cpu.Acquire(ctx)
		require.NoError(t, err)
		held = append(held, release)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(cpu)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP timetable_cpu_slots Slots of the server's pool for heavy CPU work (aggregates, a write's decoding and its write).
# TYPE timetable_cpu_slots gauge
timetable_cpu_slots 3
# HELP timetable_cpu_slots_held Slots of the CPU pool held now.
# TYPE timetable_cpu_slots_held gauge
timetable_cpu_slots_held 3
# HELP timetable_cpu_slots_taken_total Slots of the CPU pool taken, each counted when taken; a tenant alone takes none (admission.CPU.AcquireFor).
# TYPE timetable_cpu_slots_taken_total counter
timetable_cpu_slots_taken_total 1603
`)))
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err := cpu.Acquire(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 3, cpu.Held(), "a wait that failed holds nothing")
	got := make(chan error)
	go func() {
		release, err := cpu.Acquire(ctx)
		if err == nil {
			release()
		}
		got <- err
	}()
	held[0]()
	require.NoError(t, <-got)
	for _, release := range held[1:] {
		release()
	}
	require.Zero(t, cpu.Held())
	require.Equal(t, 32*50+4, cpu.Taken(), "three, and the one that waited for a slot given back; the wait that failed took none")
}

// A tenant alone takes no slot: its heavy work uses every core. Once
// another tenant was seen within ActiveWindow, its heavy work takes
// slots (and so does the other's), and after the window it takes none
// again.
func TestCPUTenantAloneTakesNoSlot(t *testing.T) {
	cpu := admission.NewCPU(1)
	now := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	cpu.SetNow(func() time.Time { return now })
	ctx := context.Background()
	takes := func(tenant string) bool {
		t.Helper()
		release, err := cpu.AcquireFor(ctx, tenant)
		require.NoError(t, err)
		defer release()
		return cpu.Held() == 1
	}

	require.False(t, takes("acme"), "no tenant seen")
	cpu.Seen("acme")
	require.False(t, takes("acme"), "acme alone, however often seen")
	cpu.Seen("acme")
	require.True(t, takes("globex"), "acme is active: globex's heavy work takes a slot")

	cpu.Seen("globex")
	cpu.Seen("globex")
	require.True(t, takes("acme"), "globex is active")
	require.True(t, takes("globex"), "acme is still active")
	now = now.Add(admission.ActiveWindow - time.Second)
	require.True(t, takes("globex"), "acme's last request is within the window")
	now = now.Add(time.Second)
	cpu.Seen("globex")
	require.True(t, takes("acme"), "globex was just seen")
	require.False(t, takes("globex"), "acme's last request is past the window")

	// Three tenants: the latest request of any other counts.
	cpu.Seen("initech")
	now = now.Add(time.Second)
	cpu.Seen("acme")
	require.True(t, takes("acme"), "initech and globex were seen a second ago")
	now = now.Add(admission.ActiveWindow)
	require.False(t, takes("acme"), "the others are past the window")
	require.False(t, takes("globex"), "so is acme")

	// A full pool, a context that ended: an error and nothing held,
	// alone or not.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := cpu.AcquireFor(cancelled, "acme")
	require.ErrorIs(t, err, context.Canceled)
	cpu.Seen("globex")
	release, err := cpu.Acquire(ctx)
	require.NoError(t, err)
	_, err = cpu.AcquireFor(cancelled, "acme")
	require.ErrorIs(t, err, context.Canceled)
	release()
	require.Zero(t, cpu.Held())

	// No pool (a store without one): nothing to wait for.
	var none *admission.CPU
	none.Seen("globex")
	release, err = none.AcquireFor(ctx, "acme")
	require.NoError(t, err)
	release()
}
