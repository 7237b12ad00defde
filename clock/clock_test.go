package clock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
)

func TestManual(t *testing.T) {
	var zero clock.Manual
	require.Equal(t, time.Unix(0, 0).UTC(), zero.Now(), "the zero clock stands at the epoch")

	at := time.Date(2017, 4, 10, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	c := clock.NewManual(at)
	require.Equal(t, time.UTC, c.Now().Location())
	require.True(t, c.Now().Equal(at))

	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { c.Advance(time.Hour) })
	}
	wg.Wait()
	require.True(t, c.Now().Equal(at.Add(10*time.Hour)))
	c.Set(at)
	require.True(t, c.Now().Equal(at))
}

func TestManualTimer(t *testing.T) {
	at := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
	c := clock.NewManual(at)
	fired := func(tm *clock.Timer) (time.Time, bool) {
		select {
		case when := <-tm.C:
			return when, true
		default:
			return time.Time{}, false
		}
	}

	hour := c.NewTimer(time.Hour)
	day := c.NewTimer(24 * time.Hour)
	stopped := c.NewTimer(time.Minute)
	require.True(t, stopped.Stop(), "a waiting timer stops")
	require.False(t, stopped.Stop(), "a timer stops once")

	c.Advance(59 * time.Minute)
	_, ok := fired(hour)
	require.False(t, ok, "not yet due")
	c.Advance(2 * time.Minute)
	when, ok := fired(hour)
	require.True(t, ok, "due")
	require.Equal(t, at.Add(61*time.Minute), when, "a timer receives the clock's time")
	require.False(t, hour.Stop(), "a fired timer does not stop")
	_, ok = fired(stopped)
	require.False(t, ok, "a stopped timer never fires")

	c.Set(at.Add(48 * time.Hour))
	_, ok = fired(day)
	require.True(t, ok, "Set fires the timers due too")

	now, ok := fired(c.NewTimer(0))
	require.True(t, ok, "a timer of no duration fires at once")
	require.Equal(t, c.Now(), now)
}

func TestWaitForTimers(t *testing.T) {
	var c clock.Manual
	ctx := context.Background()
	require.NoError(t, c.WaitForTimers(ctx, 0))

	made := make(chan *clock.Timer)
	go func() { made <- c.NewTimer(time.Second) }()
	require.NoError(t, c.WaitForTimers(ctx, 1), "returns once the timer is made")
	tm := <-made
	tm.Stop()

	ctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, c.WaitForTimers(ctx, 1), context.Canceled, "no timer waits")
}

func TestRealIsUTC(t *testing.T) {
	require.Equal(t, time.UTC, clock.Real{}.Now().Location())
}

func TestRealTimer(t *testing.T) {
	tm := clock.Real{}.NewTimer(time.Nanosecond)
	<-tm.C
	require.False(t, tm.Stop(), "fired")
	require.True(t, clock.Real{}.NewTimer(time.Hour).Stop())
}

func ExampleManual() {
	c := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
	c.Advance(7 * 24 * time.Hour)
	fmt.Println(c.Now())
	// Output: 2017-04-16 00:00:00 +0000 UTC
}

func ExampleManual_NewTimer() {
	c := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
	t := c.NewTimer(time.Hour)
	c.Advance(90 * time.Minute)
	fmt.Println(<-t.C)
	// Output: 2017-04-09 01:30:00 +0000 UTC
}
