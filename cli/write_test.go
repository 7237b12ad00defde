package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	input := strings.Join([]string{
		`{"time": "2017-06-15T08:00:00Z", "series": "car-17", "fields": {"i": 1}}`,
		`{"time": "2017-06-15T08:01:00Z", "fields": {"i": 2`,
		`{"time": "2017-06-15T08:02:00Z", "fields": {"i": 3}}`,
		`{"fields": {"i": 4}}`,
		``,
		`{"time": "2017-06-15T08:05:00Z", "fields": {"i": 6}}`,
		`{"time": "2017-06-15T08:06:00Z", "fields": {"pk": 7}}`,
		`{"time": "2017-06-15T08:07:00Z", "fields": {"big": "` + strings.Repeat("x", 500_000) + `"}}`,
		`{"time": "2017-06-15T08:08:00Z", "series": "car-18", "fields": {"i": 9}}`,
	}, "\n")
	write := []string{"write", store, "--tenant", "acme", "--table", "a_table", "--series", "default-car", "--batch", "2"}

	r := run(t, input, append(write, "-")...)
	require.EqualError(t, r.err, "4 bad lines not written")
	require.Equal(t, ExitFailure, ExitCode(r.err))
	for _, want := range []string{"line 2: ", "line 4: time: missing", `line 7: fields: name "pk" is reserved`, "line 8: event is 500089 bytes as a stored item", "wrote 4 events to a_table, 4 bad lines, in "} {
		require.Contains(t, r.stderr, want)
	}
	require.Empty(t, r.stdout)

	// Writing the same input again stores nothing twice.
	r = run(t, input, write...)
	require.Contains(t, r.stderr, "wrote 4 events to a_table, 4 bad lines")

	events := queryJSON(t, store, "a_table")
	require.Len(t, events, 4)
	var got []string
	for _, e := range events {
		got = append(got, e["series"].(string)+":"+string(e["fields"].(map[string]any)["i"].(json.Number)))
	}
	require.Equal(t, []string{"car-17:1", "default-car:3", "default-car:6", "car-18:9"}, got)
}

func TestWriteFile(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	path := filepath.Join(t.TempDir(), "events.ndjson")
	require.NoError(t, os.WriteFile(path, []byte(ndjsonLines(12)), 0o644))
	r := mustRun(t, "", "write", store, "--tenant", "acme", "--table", "t", "--batch", "5", path)
	require.Contains(t, r.stderr, "wrote 12 events to t, 0 bad lines")
	require.Len(t, queryJSON(t, store, "t"), 12)

	t.Run("a batch of nothing but bad lines", func(t *testing.T) {
		r := run(t, "[1]\nnot json\n"+ndjsonLines(1), "write", store, "--tenant", "acme", "--table", "t", "--batch", "2")
		require.EqualError(t, r.err, "2 bad lines not written")
		require.Contains(t, r.stderr, "lines 1 to 2: not JSON objects")
		require.Contains(t, r.stderr, "wrote 1 event")
	})
	t.Run("seconds without --precision", func(t *testing.T) {
		secs := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
		r := run(t, `{"time": `+secs+`, "series": "s", "fields": {"i": 1}}`, "write", store, "--tenant", "acme", "--table", "t")
		require.EqualError(t, r.err, "1 bad line not written")
		require.Contains(t, r.stderr, "say --precision s for seconds (--precision ms keeps it as milliseconds)")
		require.NotContains(t, r.stderr, "precision=")
		require.Contains(t, r.stderr, "wrote 0 events to t, 1 bad line, in ")
	})
	t.Run("missing file", func(t *testing.T) {
		r := run(t, "", "write", store, "--tenant", "acme", "--table", "t", filepath.Join(t.TempDir(), "absent"))
		require.ErrorIs(t, r.err, os.ErrNotExist)
	})
}

func TestWriteNeedsTenant(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	tests := []struct {
		name, env string
		args      []string
		says      string
		code      int
	}{
		{"no tenant", "", nil, "no tenant: pass --tenant NAME or set TIMETABLE_TENANT", ExitUsage},
		{"unknown tenant", "", []string{"--tenant", "acne"}, "no tenant \"acne\": create it with `timetable tenant add acne`", ExitFailure},
		{"bad tenant name", "", []string{"--tenant", "Acme!"}, "bad tenant name", ExitUsage},
		{"tenant from the environment", "acme", nil, "", ExitOK},
		{"bad table name", "acme", []string{"--table=a#table"}, `bad name: table "a#table"`, ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvTenant, tt.env)
			args := append([]string{"write", store, "--table", "a_table"}, tt.args...)
			r := run(t, ndjsonLines(1), args...)
			require.Equal(t, tt.code, ExitCode(r.err), "error: %v", r.err)
			if tt.says != "" {
				require.ErrorContains(t, r.err, tt.says)
			}
		})
	}
}

// ndjsonLines returns n events, one a minute before testNow.
func ndjsonLines(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`{"time": "2017-06-15T08:` + twoDigits(i) + `:00Z", "series": "s", "fields": {"i": ` + itoa(int64(i)) + "}}\n")
	}
	return b.String()
}

func twoDigits(i int) string {
	return string([]byte{byte('0' + i/10), byte('0' + i%10)})
}

// queryJSON returns every event of a table of acme, decoded with numbers
// as json.Number.
func queryJSON(t *testing.T, store, table string) []map[string]any {
	t.Helper()
	r := mustRun(t, "", "query", store, "--tenant", "acme", "--table", table, "--from", "0", "--to", testNow, "--limit", "0", "--format", "json")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	var events []map[string]any
	require.NoError(t, dec.Decode(&events))
	return events
}

// interruptedInput hands out its lines, then, asked for more (the lines
// are all read by then), interrupts the command as Ctrl-C would and
// blocks, as a terminal or a pipe with nothing more to say does.
type interruptedInput struct {
	lines     string
	interrupt context.CancelFunc
	served    bool
	release   chan struct{}
}

func (r *interruptedInput) Read(p []byte) (int, error) {
	if !r.served {
		r.served = true
		return copy(p, r.lines), nil
	}
	r.interrupt()
	select {
	case <-r.release:
	case <-time.After(5 * time.Second): // a writer that ignores Ctrl-C ends here
	}
	return 0, io.EOF
}

// Ctrl-C on `timetable write -` writes what was read and exits 130.
func TestWriteInterruptedWritesWhatItRead(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	t.Setenv(EnvNow, testNow)
	ctx, cancel := context.WithCancel(context.Background())
	in := &interruptedInput{
		lines: `{"time": "2017-06-15T08:00:00Z", "fields": {"i": 1}}
{"time": "2017-06-15T08:00:01Z", "fields": {"i": 2}}
{"time": "2017-06-15T08:00:02Z", "fields": {"i": 3}}
`,
		interrupt: cancel,
		release:   make(chan struct{}),
	}
	defer close(in.release)
	root := NewRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(in)
	root.SetArgs([]string{"write", store, "--tenant", "acme", "--table", "t", "--batch", "1000", "-"})
	err := root.ExecuteContext(ctx)
	require.Equal(t, ExitInterrupted, ExitCode(err), "err %v", err)
	require.Contains(t, errOut.String(), "wrote 3 events")

	r := mustRun(t, "", "query", store, "--tenant", "acme", "--table", "t", "--from", "0", "--to", testNow, "--format", "json")
	var events []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &events))
	require.Len(t, events, 3, "every line read before the interrupt is stored")
}
