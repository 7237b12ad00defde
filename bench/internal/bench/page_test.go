package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWritePage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	m := Machine{Date: time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC), CPU: "Test CPU", Cores: 2, MemoryGiB: 7.8, Go: "go1.26.8", Commit: "abc123", Flags: "-peers=without"}
	r := &Report{
		Rows:  []Row{{Figure: "ingest, library (Pebble)", Value: 600000, Unit: "ev/s", Baseline: "raw Pebble | synced", Base: 700000, Aim: "≥ 0.40"}},
		Notes: []string{"180-byte events"},
	}
	lat := make([]float64, len(peerQueries))
	p := &PeerReport{results: []peerResult{
		{name: "timetable", ingest: 400000, p50: lat, p99: lat, durability: "synced"},
		{name: "InfluxDB", version: "1.6.7", ingest: 500000, p50: lat, p99: lat, durability: "synced"},
	}}
	require.NoError(t, WritePage(path, m, r, p))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	page := string(b)
	require.True(t, strings.HasPrefix(page, "# Benchmarks\n"))
	for _, want := range []string{
		"2026-11-26 20:00 UTC",
		"- machine: 2 cores (Test CPU), 7.8 GiB of memory",
		"- Go: go1.26.8", "- commit: `abc123`", "- flags: `-peers=without`",
		"| figure | timetable | baseline | baseline value | ratio | aim |\n|---|---|---|---|---|---|\n",
		"| ingest, library (Pebble) | 600000 ev/s | raw Pebble \\| synced | 700000 ev/s | 0.86 | ≥ 0.40 |",
		"- 180-byte events",
		"| figure | timetable | InfluxDB 1.6.7 |",
		"| ingest, events/s | 400000 | 500000 (0.80) |",
	} {
		require.Contains(t, page, want)
	}

	// A run without the peers leaves their section out.
	require.NoError(t, WritePage(path, m, r, nil))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(b), "ratio timetable/peer** in brackets")
}

func TestThisMachine(t *testing.T) {
	m := ThisMachine(".", nil)
	require.Positive(t, m.Cores)
	require.NotEmpty(t, m.Go)
	require.NotEmpty(t, m.Commit)
}
