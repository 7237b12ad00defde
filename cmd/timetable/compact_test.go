package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCompactKilled writes events as rows (a family of the row layout),
// then runs `timetable compact` with the family made chunk, killing it
// with SIGKILL at several points: in the copy, in the verification, and
// right after the switch on DynamoDB (where the table is rewritten into
// its next physical table), in the packing on Pebble (in place). After
// every kill a query answers exactly as before (0 lost, 0 duplicates);
// the run after the last kill finishes, and a further run finds nothing
// to do.
func TestCompactKilled(t *testing.T) {
	bin := build(t)
	for _, tg := range migrateTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := tg.spec
			if strings.HasPrefix(spec, "pebble:") {
				spec = "pebble:" + filepath.Join(dir, "data")
			}
			rows := migrateConfig(t)
			base, err := os.ReadFile(rows)
			require.NoError(t, err)
			chunks := filepath.Join(dir, "chunks.yaml")
			require.NoError(t, os.WriteFile(chunks, []byte(strings.Replace(string(base), "    prefix:", "    layout: chunk\n    chunk_window: 1h\n    prefix:", 1)), 0o644))
			require.NoError(t, os.WriteFile(rows, []byte(strings.Replace(string(base), "    prefix:", "    layout: row\n    prefix:", 1)), 0o644))

			env := append(os.Environ(), "TIMETABLE_NOW=2026-12-01T12:00:00Z")
			runBin(t, env, bin, "--config", rows, "--store", spec, "tenant", "add", "acme")
			const events = 2400
			var in strings.Builder
			at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			for i := range events {
				fmt.Fprintf(&in, `{"time":%q,"series":"car-%d","fields":{"speed":%d.5}}`+"\n", at.Add(-time.Duration(i)*45*time.Second).Format(time.RFC3339), i%3, i)
			}
			file := filepath.Join(dir, "events.ndjson")
			require.NoError(t, os.WriteFile(file, []byte(in.String()), 0o644))
			runBin(t, env, bin, "--config", rows, "--store", spec, "write", "--tenant", "acme", "--table", "cars", file)
			query := []string{"--config", chunks, "--store", spec, "query", "--tenant", "acme", "--table", "cars", "--from", "2026-11-01T00:00:00Z", "--to", "2026-12-02T00:00:00Z", "--format", "ndjson"}
			want := runBin(t, env, bin, query...)
			require.Len(t, ids(t, want), events)

			// Compacted a month later, every table settled: a table
			// rewritten once it took no more writes is not again.
			env = append(os.Environ(), "TIMETABLE_NOW=2027-01-01T00:00:00Z")
			args := []string{"--config", chunks, "--store", spec, "--log-level", "debug", "compact", "--checkpoint-windows", "5"}
			// Kill points: the nth save of the compaction's progress at
			// a step ("" is in place).
			type point struct {
				step string
				n    int
			}
			points := []point{{"copy", 3}, {"copy", 10}, {"verify", 4}, {"drop", 1}}
			if tg.name == "pebble" {
				points = []point{{"", 2}, {"", 5}}
			}
			for _, p := range points {
				step := "step=" + p.step + " "
				if p.step == "" {
					step = `step="" `
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				stderr, err := cmd.StderrPipe()
				require.NoError(t, err)
				require.NoError(t, cmd.Start())
				saves, killed := 0, false
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					line := sc.Text()
					if !killed && strings.Contains(line, "compaction progress saved") && strings.Contains(line, step) {
						if saves++; saves == p.n {
							require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
							killed = true
						}
					}
				}
				err = cmd.Wait()
				require.True(t, killed, "the compaction ended before save %d of step %q", p.n, p.step)
				require.Error(t, err, "killed")
				require.Equal(t, want, runBin(t, env, bin, query...), "killed at save %d of step %q: 0 lost, 0 duplicates", p.n, p.step)
			}

			out := runBin(t, env, bin, args...)
			if tg.name == "dynamodb" {
				require.Contains(t, out, ".r1")
			}
			require.Equal(t, want, runBin(t, env, bin, query...), "every event once, as it was")
			out = runBin(t, env, bin, args...)
			require.NotContains(t, out, "rewritten", "nothing left to do")
			require.NotContains(t, out, "packed", "nothing left to do")
		})
	}
}
