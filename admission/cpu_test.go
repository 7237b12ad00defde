package admission_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
)

// The pool has one slot fewer than GOMAXPROCS, at least one.
func TestCPUSlots(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 1, 2: 1, 3: 2, 8: 7} {
		runtime.GOMAXPROCS(procs)
		require.Equal(t, want, admission.CPUSlots(), "GOMAXPROCS %d", procs)
		require.Equal(t, want, admission.NewCPU(0).Slots(), "GOMAXPROCS %d", procs)
	}
	require.Equal(t, 3, admission.NewCPU(3).Slots())
}

// However many goroutines do heavy work, they never hold more than the
// pool's slots at once, each slot given back is taken again, and a
// release called twice gives back one slot.
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
	require.LessOrEqual(t, cpu.MostHeld(), 3)
	require.GreaterOrEqual(t, cpu.MostHeld(), 1)

	// A full pool: the next waits until its context ends, or until a
	// slot is given back.
	var held []func()
	for range 3 {
		release, err := cpu.Acquire(ctx)
		require.NoError(t, err)
		held = append(held, release)
	}
	require.Equal(t, 3, cpu.MostHeld())
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
}
