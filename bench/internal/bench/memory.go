package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// PeakRSS returns the process's peak resident memory in MiB (VmHWM from
// /proc/self/status), or 0 where that is not available.
func PeakRSS() float64 { return peakRSSOf("self") }

// peakRSSOf returns the peak resident memory in MiB of the process pid
// names ("self", or a number), or 0 where that is not available.
func peakRSSOf(pid string) float64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
