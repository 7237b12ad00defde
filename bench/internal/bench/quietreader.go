package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"time"
)

// quietReaderEnv names the environment variable that makes the bench's
// binary the quiet tenant's reader (QuietReaderMain): its value is the
// quietReads to make, as JSON.
const quietReaderEnv = "TIMETABLE_BENCH_QUIET_READER"

// quietReads are the quiet tenant's latest-10 reads: one every Interval,
// of its Series series in turn, Reads of them or as many as Window
// allows.
type quietReads struct {
	// Events is the URL of the table's events; Query its query but the
	// series.
	Events   string
	Query    url.Values
	Key      string
	Series   int
	Reads    int
	Interval time.Duration
	Window   time.Duration
}

// quietAnswer is what the reader measured: each read's time as it saw
// it, and, for each tick that came after the read before had ended, how
// late the reader woke for it (its own wait for a core).
type quietAnswer struct {
	Reads, Wakes []time.Duration
	Err          string
}

// QuietReaderMain makes the bench's binary the quiet tenant's reader when
// the environment asks (quietReaderEnv): it reads as asked, writes the
// quietAnswer to standard output and returns true. Otherwise it returns
// false at once. The limits part runs the reader this way, as a process
// of its own with one goroutine, so that its reads wait for the server
// and for a core as another tenant's client would, not behind the noisy
// tenant's 200 writers in the bench's own process.
func QuietReaderMain() bool {
	spec, ok := os.LookupEnv(quietReaderEnv)
	if !ok {
		return false
	}
	var q quietReads
	var a quietAnswer
	if err := json.Unmarshal([]byte(spec), &q); err != nil {
		a.Err = fmt.Sprintf("%s: %v", quietReaderEnv, err)
	} else {
		a = q.read(context.Background())
	}
	json.NewEncoder(os.Stdout).Encode(a)
	return true
}

// read makes the reads, in this goroutine.
func (q quietReads) read(ctx context.Context) (a quietAnswer) {
	client := &http.Client{}
	tick := time.NewTicker(q.Interval)
	defer tick.Stop()
	window := time.After(q.Window)
	var ended time.Time
	for i := 0; i < q.Reads; i++ {
		select {
		case <-window:
			return a
		case at := <-tick.C:
			if at.After(ended) {
				a.Wakes = append(a.Wakes, time.Since(at))
			}
		}
		query := url.Values{"series": {fmt.Sprintf("dev-%03d", i%q.Series)}}
		for k, v := range q.Query {
			query[k] = v
		}
		begin := time.Now()
		if err := fetch(ctx, client, http.MethodGet, q.Events+"?"+query.Encode(), http.Header{"Authorization": {"Bearer " + q.Key}}, nil, nil); err != nil {
			a.Err = err.Error()
			return a
		}
		ended = time.Now()
		a.Reads = append(a.Reads, ended.Sub(begin))
	}
	return a
}

// runQuietReader runs the reads in a process of their own, the bench's
// binary again (QuietReaderMain), and returns what it measured.
func runQuietReader(ctx context.Context, q quietReads) (quietAnswer, error) {
	var a quietAnswer
	self, err := os.Executable()
	if err != nil {
		return a, err
	}
	spec, err := json.Marshal(q)
	if err != nil {
		return a, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), quietReaderEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return a, fmt.Errorf("the quiet reader: %w", err)
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return a, fmt.Errorf("the quiet reader's answer: %w", err)
	}
	if a.Err != "" {
		return a, fmt.Errorf("the quiet reader: %s", a.Err)
	}
	return a, nil
}
