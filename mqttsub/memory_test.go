package mqttsub_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/internal/memtest"
)

// A message of 2,000,000 events (87 MiB) is over the per-message limit
// of 16 MiB: it is dead-lettered without being decoded, the process's
// peak resident memory (VmHWM) stays under 512 MiB, and the messages
// after it are written. With -short the message is a quarter of the
// size, still over the limit.
func TestAHugeMessageIsRefusedInBoundedMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what memory holds")
	}
	f := newFixture(t)
	events := 2_000_000
	if testing.Short() {
		events /= 4
	}
	path := filepath.Join(t.TempDir(), "huge.ndjson")
	file, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(file)
	ms := now.Add(-time.Hour).UnixMilli()
	for i := range events {
		fmt.Fprintf(w, `{"time":%d,"series":"s%02d"}`+"\n", ms+int64(i), i%16)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, file.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)

	_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, Format: config.FormatJSON})
	debug.FreeOSMemory()
	memtest.ResetPeak(t)
	out, err := exec.Command(f.pub, "-h", "127.0.0.1", "-p", fmt.Sprint(f.broker.Port), "-q", "1", "-t", "plant/dev1/telemetry", "-f", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	f.publish("plant/dev1/telemetry", event(1, ""))
	f.eventually("refused the huge message", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 1 })
	f.eventually("wrote the next", func() bool { return len(f.events("telemetry")) == 1 })
	peak := memtest.PeakRSS(t)
	t.Logf("a message of %d events (%d MiB): peak RSS %d MiB", events, info.Size()>>20, peak>>20)
	require.Less(t, peak, int64(512<<20))
}
