package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/memtest"
	"github.com/timetabledb/timetable/server"
)

// InfluxQL's answers are bounded as every read is: on a measurement of n
// series of three events each, at two sizes of n, an aggregate of every
// series by time() and tags, filled, whose series × buckets are more than
// the tenant's share of the query budget is refused with 413 naming
// max_query_partitions before anything is built (at a minute over a day,
// an hour over a year filled with 0, a second over a day, chunked or
// not), as are statements that each fit but not together; one that fits
// is answered; a raw SELECT whose OFFSET is past the share is refused
// with 413 before anything is read (GROUP BY *, which skips OFFSET's
// rows of each series as it reads them, is answered), and 16 raw SELECTs
// of 400 series at once are each answered or refused with 429 while the
// others hold the share; the raw statements of one request are counted
// together, so 20 statements of SELECT * GROUP BY * and 2,000 statements
// of SELECT * of 400 series merged (100 with -short) are refused with 413
// before any is read, and with LIMIT 3 a series (of 40 series, for the
// 2,000) answered whole, streamed.
// The Go heap
// stays under 512 MiB, objects and garbage together, what the last
// collection found live under 384 MiB, and the process's peak resident
// memory (VmHWM, reset before each case) under 512 MiB, with the soft
// memory limit of a deployment of 512 MiB (GOMEMLIMIT=352MiB), as
// TestMemoryIsBoundedInWhatRequestsHold holds writes. With -short, as
// scripts/test.sh runs it, n is 1,000 and 4,000; else 25,000 and
// 100,000.
func TestInfluxQLMemoryIsBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what memory holds and how fast it goes")
	}
	memtest.ResetPeak(t)
	sizes := []int{25_000, 100_000}
	if testing.Short() {
		sizes = []int{1_000, 4_000}
	}
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) { influxQLMemory(t, n) })
	}
}

func influxQLMemory(t *testing.T, n int) {
	f := newFixture(t, server.Options{})
	writeFan(t, f, n)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(352 << 20))

	every := func(interval, over, fill string) string {
		return fmt.Sprintf("SELECT mean(v) FROM fan WHERE time > now() - %s GROUP BY time(%s), * fill(%s)", over, interval, fill)
	}
	for _, c := range []struct {
		name, q string
		chunked bool
	}{
		{"minutes-of-a-day", every("1m", "1d", "null"), false},
		{"minutes-of-a-day-chunked", every("1m", "1d", "null"), true},
		{"hours-of-a-year", every("1h", "365d", "0"), false},
		{"seconds-of-a-day", every("1s", "1d", "null"), false},
		{"seconds-of-a-day-chunked", every("1s", "1d", "null"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			boundedMemory(t, func() {
				status, body, _ := influxQuery(t, f, c.q, c.chunked, nil)
				require.Equal(t, http.StatusRequestEntityTooLarge, status, "body: %.300s", body)
				require.Contains(t, body, "statement 0 answers "+strconv.Itoa(n)+" series")
				require.Contains(t, body, "max_query_partitions = 16384")
			})
		})
	}

	// Statements that each fit, but not together: the third is past the
	// share, and the request is refused before any is answered.
	t.Run("statements-together", func(t *testing.T) {
		// 45 series × 1,441 rows of 2 columns: about 10 MiB each, at
		// 160 bytes a row, of the share's 32 MiB.
		one := every("1m", "1d", "null") + " SLIMIT 45"
		status, body, _ := influxQuery(t, f, one+";"+one, false, nil)
		require.Equal(t, http.StatusOK, status, "body: %.300s", body)
		status, body, _ = influxQuery(t, f, one+";"+one+";"+one+";"+one, false, nil)
		require.Equal(t, http.StatusRequestEntityTooLarge, status, "body: %.300s", body)
		require.Contains(t, body, "statement 3 answers 45 series × 1441 rows of 2 columns")
		require.Contains(t, body, "max_query_partitions = 16384")
	})

	// An aggregate within the share is answered, filled.
	t.Run("within-the-share", func(t *testing.T) {
		q := every("1h", "1d", "null") + " SLIMIT 2 SOFFSET 7"
		status, body, _ := influxQuery(t, f, q, false, url.Values{"epoch": {"ms"}})
		require.Equal(t, http.StatusOK, status, "body: %.300s", body)
		var res struct {
			Results []struct {
				Series []struct {
					Tags   map[string]string
					Values [][]any
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(body), &res))
		require.Len(t, res.Results[0].Series, 2)
		for k, s := range res.Results[0].Series {
			i := 7 + k
			require.Equal(t, map[string]string{"host": fmt.Sprintf("h%06d", i)}, s.Tags)
			require.Len(t, s.Values, 25)
			got := map[int64]any{}
			for _, row := range s.Values {
				got[int64(row[0].(float64))] = row[1]
			}
			for j, at := range fanTimes(i) {
				hour := at.Truncate(time.Hour).UnixMilli()
				require.Equal(t, float64(i*3+j), got[hour], "series %d, event %d", i, j)
			}
		}
	})

	// A raw SELECT holds the rows of one group it reads, OFFSET's
	// included, of the query budget: an OFFSET far past the share is
	// refused with 413 before anything is read; one within it answers
	// the rows past it; a series of its own skips OFFSET's as it reads
	// them, and is answered.
	t.Run("select-star-offset", func(t *testing.T) {
		boundedMemory(t, func() {
			status, body, _ := influxQuery(t, f, "SELECT * FROM fan OFFSET 5000000", false, nil)
			require.Equal(t, http.StatusRequestEntityTooLarge, status, "body: %.300s", body)
			require.Contains(t, body, "statement 0 answers up to 5011001 rows of 3 columns of a group at once, for OFFSET 5000000 and 10001 rows")
			require.Contains(t, body, "max_query_partitions = 16384")
			status, body, _ = influxQuery(t, f, "SELECT v FROM fan LIMIT 10 OFFSET 990", false, nil)
			require.Equal(t, http.StatusOK, status, "body: %.300s", body)
			var res struct {
				Results []struct{ Series []struct{ Values [][]any } }
			}
			require.NoError(t, json.Unmarshal([]byte(body), &res))
			require.Len(t, res.Results[0].Series, 1)
			require.Len(t, res.Results[0].Series[0].Values, 10)
			status, body, counted := influxQuery(t, f, "SELECT * FROM fan GROUP BY * OFFSET 5000000", false, nil)
			require.Equal(t, http.StatusOK, status, "body: %.300s", body)
			require.Zero(t, counted, "series answered")
			status, body, counted = influxQuery(t, f, "SELECT * FROM fan GROUP BY * OFFSET 2", true, nil)
			require.Equal(t, http.StatusOK, status, "body: %.300s", body)
			require.Equal(t, n, counted, "series answered, one row each")
		})
	})
	// Raw SELECTs of 400 series merged, 16 at once, each counting
	// twice 10,001 rows: each answered whole, or refused with 429 while
	// the tenant's share is held by the others, to be retried.
	t.Run("select-star-concurrent", func(t *testing.T) {
		boundedMemory(t, func() {
			const queries = 16
			type answer struct {
				status int
				body   string
				series int
			}
			answers := make(chan answer, queries)
			for range queries {
				go func() {
					status, body, series := influxQuery(t, f, "SELECT * FROM fan WHERE host =~ /^h000[0-3]/", false, nil)
					answers <- answer{status, body, series}
				}()
			}
			ok := 0
			for range queries {
				a := <-answers
				switch a.status {
				case http.StatusOK:
					ok++
					require.Equal(t, 1, a.series, "body: %.300s", a.body)
				case http.StatusTooManyRequests:
					require.Contains(t, a.body, "max_query_partitions")
				default:
					t.Fatalf("status %d: %.300s", a.status, a.body)
				}
			}
			require.NotZero(t, ok, "answered")
		})
	})

	// The raw statements of a request are counted together: 20 of
	// SELECT * GROUP BY *, each counted as a group's 10,001 rows, are
	// refused whole before any is read; with LIMIT 3 they fit together,
	// and are answered, streamed statement by statement and series by
	// series.
	t.Run("select-star-group-by-star-20", func(t *testing.T) {
		boundedMemory(t, func() {
			status, body, _ := influxQuery(t, f, strings.Repeat("SELECT * FROM fan GROUP BY *;", 20), false, nil)
			require.Equal(t, http.StatusRequestEntityTooLarge, status, "body: %.300s", body)
			require.Contains(t, body, "statement 3 answers up to 10001 rows of 3 columns of a group at once")
			require.Contains(t, body, "max_query_partitions = 16384")
			status, body, counted := influxQuery(t, f, strings.Repeat("SELECT * FROM fan GROUP BY * LIMIT 3;", 20), false, nil)
			require.Equal(t, http.StatusOK, status, "body: %.300s", body)
			require.Equal(t, 20*n, counted, "series answered")
		})
	})
	// Statements of 400 series (h000000 to h000399) of three events,
	// merged in one group, each counted as twice 10,001 rows: refused
	// together at the second. Statements of 40 series, each a group of
	// its own of at most three rows: answered, chunked.
	statements := 2000
	if testing.Short() {
		statements = 100
	}
	t.Run("select-star-"+strconv.Itoa(statements), func(t *testing.T) {
		boundedMemory(t, func() {
			status, body, _ := influxQuery(t, f, strings.Repeat("SELECT * FROM fan WHERE host =~ /^h000[0-3]/;", statements), true, nil)
			require.Equal(t, http.StatusRequestEntityTooLarge, status, "body: %.300s", body)
			require.Contains(t, body, "statement 1 answers up to 20002 rows of 3 columns of a group at once")
			require.Contains(t, body, "max_query_partitions = 16384")
			status, body, counted := influxQuery(t, f, strings.Repeat("SELECT * FROM fan WHERE host =~ /^h0000[0-3]/ GROUP BY * LIMIT 3;", statements), true, nil)
			require.Equal(t, http.StatusOK, status, "body: %.300s", body)
			require.Equal(t, 40*statements, counted, "series answered")
		})
	})
}

// fanTimes are the times of series i's three events, within the last
// day.
func fanTimes(i int) []time.Time {
	return []time.Time{
		now.Add(-time.Duration(i%1000+1) * time.Minute),
		now.Add(-time.Duration(i%7+3) * time.Hour),
		now.Add(-time.Duration(i%11+12)*time.Hour - 30*time.Second),
	}
}

// writeFan writes n series of three events to acme's measurement fan, as
// line protocol writes them: series host=h000042, tag host, field v the
// series' number times three plus the event's.
func writeFan(t *testing.T, f *fixture, n int) {
	t.Helper()
	ctx := context.Background()
	events := make([]event.Event, 0, 6000)
	for i := range n {
		host := fmt.Sprintf("h%06d", i)
		for j, at := range fanTimes(i) {
			events = append(events, event.Event{Time: at, Series: "host=" + host,
				Fields: map[string]any{"host": host, "v": json.Number(strconv.Itoa(i*3 + j))}})
		}
		if len(events) == cap(events) || i == n-1 {
			_, err := f.db.Write(ctx, "acme", "fan", events)
			require.NoError(t, err)
			events = events[:0]
		}
	}
}

// boundedMemory runs do, and holds the Go heap and the peak resident
// memory meanwhile under the bounds of TestInfluxQLMemoryIsBounded.
func boundedMemory(t *testing.T, do func()) {
	t.Helper()
	debug.FreeOSMemory()
	memtest.ResetPeak(t)
	heap := memtest.SampleHeap(5*time.Millisecond, memtest.HeapObjects, memtest.HeapLive)
	start := time.Now()
	do()
	peak := memtest.PeakRSS(t)
	h := heap()
	objects, live := h[0], h[1]
	t.Logf("peak heap objects %d MiB, live after a collection %d MiB; peak RSS %d MiB (%s)", objects>>20, live>>20, peak>>20, time.Since(start).Round(time.Millisecond))
	require.Less(t, objects, uint64(512<<20), "peak heap objects %d MiB", objects>>20)
	require.Less(t, live, uint64(384<<20), "peak live heap %d MiB", live>>20)
	require.Less(t, peak, int64(512<<20), "peak RSS %d MiB", peak>>20)
}

// influxQuery sends q to /query with acme's key, and returns the status,
// the body of a refusal (the first 64 KiB of an answer), and the series
// the answer holds, counted as it streams by.
func influxQuery(t *testing.T, f *fixture, q string, chunked bool, params url.Values) (int, string, int) {
	t.Helper()
	form := url.Values{"db": {"fan"}, "q": {q}}
	for k, v := range params {
		form[k] = v
	}
	if chunked {
		form.Set("chunked", "true")
		form.Set("chunk_size", "1000")
	}
	req, err := http.NewRequest("POST", f.url+"/query", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.acme)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	c := &seriesCounter{keep: 64 << 10}
	_, err = io.Copy(c, res.Body)
	require.NoError(t, err)
	return res.StatusCode, c.head.String(), c.n
}

// seriesCounter counts the series of an answer going by, and keeps its
// first bytes.
type seriesCounter struct {
	keep int
	head bytes.Buffer
	tail []byte
	n    int
}

// seriesMark starts each series of the fan measurement in the answer.
var seriesMark = []byte(`"name":"fan"`)

func (c *seriesCounter) Write(p []byte) (int, error) {
	if c.head.Len() < c.keep {
		c.head.Write(p[:min(len(p), c.keep-c.head.Len())])
	}
	b := append(c.tail, p...)
	c.n += bytes.Count(b, seriesMark)
	// Keep what may start a mark the next write ends.
	c.tail = append(c.tail[:0], b[max(0, len(b)-len(seriesMark)+1):]...)
	return len(p), nil
}
