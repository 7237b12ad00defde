package bench

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// pageHeader is the part of docs/benchmarks.md that says what the
// benchmark measures and how to read it; the figures after it are the run's.
//
//go:embed page_header.md
var pageHeader string

// Machine describes where and what a run measured, for the page.
type Machine struct {
	Date      time.Time
	CPU       string // the model, from /proc/cpuinfo
	Cores     int
	MemoryGiB float64 // from /proc/meminfo, 0 when unknown
	Go        string
	Commit    string // git describe of the checkout, "unknown" outside one
	Flags     string // the benchmark's flags, as given
}

// ThisMachine describes the machine the benchmark runs on, and the
// checkout in dir.
func ThisMachine(dir string, flags []string) Machine {
	m := Machine{
		Date:  time.Now().UTC(),
		CPU:   "unknown",
		Cores: runtime.NumCPU(),
		Go:    runtime.Version(),
		Flags: strings.Join(flags, " "),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if v, ok := procField(b, "model name"); ok {
			m.CPU = v
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if v, ok := procField(b, "MemTotal"); ok {
			if kib, err := strconv.ParseFloat(strings.TrimSuffix(v, " kB"), 64); err == nil {
				m.MemoryGiB = kib / (1 << 20)
			}
		}
	}
	m.Commit = "unknown"
	cmd := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=12")
	cmd.Dir = dir
	if out, err := cmd.Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc
// file whose key is key.
func procField(b []byte, key string) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// WritePage writes docs/benchmarks.md to path: the fixed header, then the
// run's machine and its tables, either of which may be nil when the run
// left it out. The file is replaced only once it is complete.
func WritePage(path string, m Machine, r *Report, p *PeerReport) error {
	var b bytes.Buffer
	writePage(&b, m, r, p)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".benchmarks-*.md")
	if err != nil {
		return fmt.Errorf("write the benchmark page: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("write the benchmark page: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the benchmark page: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write the benchmark page: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write the benchmark page: %w", err)
	}
	return nil
}

func writePage(w io.Writer, m Machine, r *Report, p *PeerReport) {
	fmt.Fprint(w, pageHeader)
	fmt.Fprintf(w, "\n## The run\n\n")
	fmt.Fprintf(w, "Written by `make bench` on %s. Do not edit the figures by hand: run `make bench` again.\n\n", m.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- machine: %d cores (%s)", m.Cores, m.CPU)
	if m.MemoryGiB > 0 {
		fmt.Fprintf(w, ", %.1f GiB of memory", m.MemoryGiB)
	}
	fmt.Fprintf(w, "\n- Go: %s\n- commit: `%s`\n", m.Go, m.Commit)
	if m.Flags != "" {
		fmt.Fprintf(w, "- flags: `%s`\n", m.Flags)
	}
	if r != nil {
		fmt.Fprintf(w, "\n## Figures beside their baselines\n\n")
		markdownTable(w, r.table())
		writeNotes(w, r.Notes)
	}
	if p != nil {
		fmt.Fprintf(w, "\n## Beside its peers\n\nEach peer's figure with **the ratio timetable/peer** in brackets: above 1 is better for timetable in events/s, below 1 in everything else.\n\n")
		markdownTable(w, p.table())
		writeNotes(w, p.notes)
	}
}

func writeNotes(w io.Writer, notes []string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
}
