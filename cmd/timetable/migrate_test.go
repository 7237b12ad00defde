package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// migrateTarget is a store a migration test copies into.
type migrateTarget struct {
	name, spec string
}

// migrateTargets returns another Pebble store, and DynamoDB when a
// server is there (scripts/with-dynamodb.sh).
func migrateTargets(t *testing.T) []migrateTarget {
	var ts []migrateTarget
	if os.Getenv("TIMETABLE_TEST_BACKENDS") != "dynamodb" { // not in the second run of scripts/test.sh
		ts = append(ts, migrateTarget{"pebble", "pebble:" + filepath.Join(t.TempDir(), "target")})
	}
	if os.Getenv(dynamotest.EndpointEnv) != "" {
		ts = append(ts, migrateTarget{"dynamodb", "dynamodb"})
	} else {
		t.Logf("DynamoDB target skipped: set %s (scripts/with-dynamodb.sh)", dynamotest.EndpointEnv)
	}
	return ts
}

// migrateConfig writes a configuration whose tables and meta table have
// names of the test's own, and deletes the DynamoDB tables of those
// names when the test ends.
func migrateConfig(t *testing.T) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := "m" + hex.EncodeToString(b)
	path := filepath.Join(t.TempDir(), "timetable.yaml")
	require.NoError(t, os.WriteFile(path, []byte("families:\n  - name: events\n    prefix: "+id+"_ev_\nmeta_table: "+id+"_meta\n"), 0o644))
	if os.Getenv(dynamotest.EndpointEnv) == "" {
		return path
	}
	t.Cleanup(func() {
		ctx := context.Background()
		s, err := dynamostore.Open(ctx, dynamostore.Options{})
		if err != nil {
			return
		}
		defer s.Close()
		var names []string
		_ = s.ListTables(ctx, id, func(name string) bool {
			if !strings.HasPrefix(name, id+"_") {
				return false
			}
			names = append(names, name)
			return true
		})
		off := false
		for _, n := range names {
			_ = s.UpdateTable(ctx, n, storage.TableUpdate{DeletionProtection: &off})
			_ = s.DeleteTable(ctx, n)
		}
	})
	return path
}

// runBin runs the binary with env and returns its standard output,
// failing the test when it fails.
func runBin(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "timetable %s\n%s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// ids returns the ids of the events of NDJSON lines, failing the test
// when one is there twice.
func ids(t *testing.T, ndjson string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for line := range strings.Lines(ndjson) {
		var e struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		require.False(t, out[e.ID], "event %s twice", e.ID)
		out[e.ID] = true
	}
	return out
}

// TestMigrateKilled kills `timetable migrate` with SIGKILL in the middle
// of a table, and runs it again: every event is on the target, once, and
// both runs' verification holds.
func TestMigrateKilled(t *testing.T) {
	bin := build(t)
	const events = 6000
	for _, tg := range migrateTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := migrateConfig(t)
			src := "pebble:" + filepath.Join(dir, "source")
			env := append(os.Environ(), "TIMETABLE_NOW=2026-12-01T12:00:00Z")
			runBin(t, env, bin, "--config", cfg, "--store", src, "tenant", "add", "acme")
			var in strings.Builder
			at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			for i := range events {
				fmt.Fprintf(&in, `{"time":%q,"series":"car-%d","fields":{"speed":%d.5}}`+"\n", at.Add(-time.Duration(i)*400*time.Second).Format(time.RFC3339), i%13, i)
			}
			file := filepath.Join(dir, "events.ndjson")
			require.NoError(t, os.WriteFile(file, []byte(in.String()), 0o644))
			runBin(t, env, bin, "--config", cfg, "--store", src, "write", "--tenant", "acme", "--table", "cars", file)
			query := []string{"--config", cfg, "query", "--tenant", "acme", "--table", "cars", "--from", "2026-10-01T00:00:00Z", "--to", "2026-12-02T00:00:00Z", "--format", "ndjson"}
			want := runBin(t, env, bin, append([]string{"--store", src}, query...)...)
			require.Len(t, ids(t, want), events)

			// Killed after the 15th page of 100 events, of 60.
			args := []string{"--config", cfg, "--log-level", "debug", "migrate", "--from", src, "--to", tg.spec, "--page-items", "100", "--write-units", "3000"}
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			pages, killed := 0, false
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "page copied") {
					if pages++; pages == 15 {
						require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
						killed = true
					}
				}
			}
			err = cmd.Wait()
			require.True(t, killed, "the migration ended before its 15th page")
			require.Error(t, err, "killed")

			out := runBin(t, env, bin, args[:len(args)-2]...) // without the budget
			require.Contains(t, out, "every table verified")
			require.Contains(t, out, fmt.Sprintf("migrated %d tables", strings.Count(out, "\n")-1))
			got := runBin(t, env, bin, append([]string{"--store", tg.spec}, query...)...)
			require.Equal(t, want, got, "every event once, as it was")

			// Twice: nothing written again.
			out = runBin(t, env, bin, args...)
			require.Contains(t, out, "(0 written now)")
		})
	}
}

// serve starts `timetable serve` and waits until it is ready.
func serve(t *testing.T, env []string, bin, addr string, args ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, append(args, "serve", "--addr", addr)...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, time.Minute, 50*time.Millisecond, "the server at %s never got ready", addr)
	return cmd
}

// TestMovingToDynamoDB moves a running server from the embedded store to
// DynamoDB as docs/migrate.md says, while a client writes all along and
// sends again what was not acknowledged: every event acknowledged, before
// the stop or after the start on DynamoDB, is on DynamoDB, once.
func TestMovingToDynamoDB(t *testing.T) {
	if os.Getenv(dynamotest.EndpointEnv) == "" {
		t.Skipf("needs DynamoDB: set %s (scripts/with-dynamodb.sh)", dynamotest.EndpointEnv)
	}
	bin := build(t)
	cfg := migrateConfig(t)
	src := "pebble:" + filepath.Join(t.TempDir(), "data")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	base := "http://" + addr
	token := strings.Repeat("ab", 32)
	env := append(os.Environ(), "TIMETABLE_ADMIN_TOKEN="+token)

	// 1. The server on the embedded store, a tenant, a client writing.
	server := serve(t, env, bin, addr, "--config", cfg, "--store", src)
	key := strings.TrimSpace(runBin(t, env, bin, "--server", base, "tenant", "add", "acme"))
	c, err := client.New(base, key, &client.Options{Attempts: 1})
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		acked []string
		done  = make(chan struct{})
		wg    sync.WaitGroup
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		start := time.Now().UTC()
		for batch := 0; ctx.Err() == nil; batch++ {
			var evs []api.Event
			for j := range 10 {
				evs = append(evs, api.Event{Time: start.Add(-time.Duration(batch*10+j) * time.Millisecond), Series: fmt.Sprintf("dev-%d", j),
					ID: fmt.Sprintf("e%d-%d", batch, j), Fields: map[string]any{"n": json.Number(fmt.Sprint(batch))}})
			}
			// Sent again until acknowledged, as a client with a queue does.
			for ctx.Err() == nil {
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := c.Write(wctx, "cars", evs)
				cancel()
				if err == nil {
					mu.Lock()
					for _, e := range evs {
						acked = append(acked, e.ID)
					}
					mu.Unlock()
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	require.Eventually(t, func() bool { return count() >= 300 }, time.Minute, 10*time.Millisecond)

	// 2. Stop the server: SIGTERM, and wait for it to exit.
	require.NoError(t, server.Process.Signal(syscall.SIGTERM))
	require.NoError(t, server.Wait())
	before := count()

	// 3. Migrate, while the client's writes are refused.
	out := runBin(t, env, bin, "--config", cfg, "migrate", "--from", src, "--to", "dynamodb")
	require.Contains(t, out, "every table verified")

	// 4. The server on DynamoDB, at the same address, with the same key.
	serve(t, env, bin, addr, "--config", cfg, "--store", "dynamodb")
	require.Eventually(t, func() bool { return count() >= before+300 }, time.Minute, 10*time.Millisecond)
	stop()
	wg.Wait()

	// Every acknowledged event is there, once.
	mu.Lock()
	defer mu.Unlock()
	got := map[string]bool{}
	q := api.Query{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Minute), Limit: 10000}
	for {
		p, err := c.Query(context.Background(), "cars", q)
		require.NoError(t, err)
		for _, e := range p.Events {
			require.False(t, got[e.ID], "event %s twice", e.ID)
			got[e.ID] = true
		}
		if p.NextCursor == "" {
			break
		}
		q = api.Query{Cursor: p.NextCursor, Limit: 10000}
	}
	lost := 0
	for _, id := range acked {
		if !got[id] {
			lost++
		}
	}
	require.Zero(t, lost, "acknowledged events lost, of %d (%d before the stop)", len(acked), before)
	t.Logf("%d events acknowledged, %d before the stop; %d on DynamoDB", len(acked), before, len(got))
}
