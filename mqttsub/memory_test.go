package mqttsub_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
)

// A message of 2,000,000 events (87 MiB) is over the per-message limit
// of 16 MiB: it is dead-lettered without being decoded, the process's
// peak resident memory (VmHWM) stays under 512 MiB, and the messages
// after it are written. With -short the message is a quarter of the
// size, still over the limit.
func TestAHugeMessageIsRefusedInBoundedMemory(t *testing.T) {
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
	resetPeak(t)
	out, err := exec.Command(f.pub, "-h", "127.0.0.1", "-p", fmt.Sprint(f.broker.Port), "-q", "1", "-t", "plant/dev1/telemetry", "-f", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	f.publish("plant/dev1/telemetry", event(1, ""))
	f.eventually("refused the huge message", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 1 })
	f.eventually("wrote the next", func() bool { return len(f.events("telemetry")) == 1 })
	peak := peakRSS(t)
	t.Logf("a message of %d events (%d MiB): peak RSS %d MiB", events, info.Size()>>20, peak>>20)
	require.Less(t, peak, int64(512<<20))
}

var hwm = regexp.MustCompile(`VmHWM:\s+(\d+) kB`)

// peakRSS returns the process's peak resident memory since the last
// resetPeak.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	m := hwm.FindSubmatch(b)
	require.NotNil(t, m)
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	require.NoError(t, err)
	return kb << 10
}

// resetPeak resets the peak resident memory to the current.
func resetPeak(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident memory: %v", err)
	}
}
