// Package memtest measures a process's memory: its peak resident memory,
// for the tests that hold the server's memory to a bound (server,
// mqttsub), and the peaks of its Go heap (SampleHeap), for those tests,
// the archive's and the benchmark's.
package memtest

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

var hwm = regexp.MustCompile(`VmHWM:\s+(\d+) kB`)

// PeakRSS returns the process's peak resident memory since the last
// ResetPeak, from /proc/self/status; it skips the test where there is
// none.
func PeakRSS(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	m := hwm.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/self/status")
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatalf("VmHWM: %v", err)
	}
	return kb << 10
}

// ResetPeak resets the peak resident memory to the current; it skips the
// test where the kernel does not allow it.
func ResetPeak(t testing.TB) {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident memory: %v", err)
	}
}
