package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An import killed (SIGKILL) after its first window resumes from its
// checkpoint when run again, and the store then holds every point of the
// file once, each with all its fields: 0 lost, 0 duplicates; on the
// embedded store and on the test's DynamoDB server.
func TestImportKilled(t *testing.T) {
	bin := build(t)
	for _, tg := range migrateTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			importKilled(t, bin, tg.spec)
		})
	}
}

// importKilled runs TestImportKilled on the store spec names.
func importKilled(t *testing.T, bin, spec string) {
	dir := t.TempDir()
	if strings.HasPrefix(spec, "pebble:") {
		spec = "pebble:" + filepath.Join(dir, "data")
	}
	store := []string{"--store", spec, "--config", migrateConfig(t)}
	code, stderr := exitCode(t, bin, append([]string{"tenant", "add", "acme"}, store...)...)
	require.Zero(t, code, stderr)

	// As influx_inspect export writes it: a series' fields one after
	// another, each with all its times.
	const series, fields, times = 500, 3, 80
	path := filepath.Join(dir, "export.lp")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "# DML\n# CONTEXT-DATABASE:plant")
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for s := range series {
		for fi := range fields {
			for i := range times {
				fmt.Fprintf(w, "m,dev=d%03d f%d=%di %d\n", s, fi, s*1000+i, start.Add(time.Duration(i)*time.Minute).UnixNano())
			}
		}
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	args := append([]string{"import", "--tenant", "acme", "--any-age", "--window-mib", "1", "--batch", "1000", path}, store...)
	cmd := exec.Command(bin, args...)
	require.NoError(t, cmd.Start())
	checkpoint := path + ".timetable-import"
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(checkpoint)
		var cp struct{ Line int }
		return err == nil && json.Unmarshal(b, &cp) == nil && cp.Line > 0
	}, time.Minute, time.Millisecond, "the import saved no checkpoint")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.FileExists(t, checkpoint, "killed before its end")

	code, stderr = exitCode(t, bin, args...)
	require.Zero(t, code, stderr)
	require.Contains(t, stderr, "resuming after line ")
	require.NotContains(t, stderr, "stored as more than one event")

	out, err := exec.Command(bin, append([]string{"query", "--tenant", "acme", "--table", "m", "--from", "2024-01-01T00:00:00Z",
		"--to", "2024-04-01T00:00:00Z", "--limit", "0", "--format", "ndjson"}, store...)...).Output()
	require.NoError(t, err)
	ids := map[string]bool{}
	points := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e struct {
			Time   string
			Series string
			ID     string
			Fields map[string]any
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		require.Len(t, e.Fields, fields+1, "every field of the point, and its tag: %s", line)
		ids[e.ID] = true
		points[e.Series+" "+e.Time] = true
	}
	require.Len(t, ids, series*times, "every point once")
	require.Len(t, points, series*times)
}
