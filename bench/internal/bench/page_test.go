package bench

import (
	"os"
	"path/filepath"
	"regexp"
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

// TestCommittedPageHeader checks that docs/benchmarks.md starts with the
// header this program writes, so that the page's fixed text is edited
// here (page_header.md) and not on the page, where the next run would
// undo it.
func TestCommittedPageHeader(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "benchmarks.md"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), pageHeader+"\n## The run\n"),
		"docs/benchmarks.md does not start with bench/internal/bench/page_header.md: edit the header there and copy it to the page (or run make bench)")
}

// TestPageHeaderHoldsNoFigures checks that the fixed header explains and
// points but quotes no figure of a run nor a date: every figure on the
// page comes from the run under it.
func TestPageHeaderHoldsNoFigures(t *testing.T) {
	figure := regexp.MustCompile(`\b\d[\d.,]*\s?((ns|µs|ms|s|KiB|MiB|GiB|ev/s|req/ev|WCU/ev)\b|%)|\b20\d\d-\d\d-\d\d\b`)
	for i, line := range strings.Split(pageHeader, "\n") {
		require.Nil(t, figure.FindStringIndex(line), "page_header.md:%d quotes a figure or a date: %q", i+1, line)
	}
	for _, quoted := range []string{"a fence settles in 1.6 s", "about 30% of the samples", "3.2 µs an event", "(2026-11-27)"} {
		require.NotNil(t, figure.FindStringIndex(quoted), "the check misses %q", quoted)
	}
}
