package clock_test

import (
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

func TestRealIsUTC(t *testing.T) {
	require.Equal(t, time.UTC, clock.Real{}.Now().Location())
}

func ExampleManual() {
	c := clock.NewManual(time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC))
	c.Advance(7 * 24 * time.Hour)
	fmt.Println(c.Now())
	// Output: 2017-04-16 00:00:00 +0000 UTC
}
