package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
)

// The answers of /query are streamed series by series, past the first
// 64 KiB, and are the same bytes as the whole answer built at once
// would be: one JSON document, compact or pretty, or chunked a document
// a line, each chunk_size rows of a series, every part but a statement's
// last marked partial; a statement that fails has its error alone in its
// result, and the statements after it are answered.
func TestInfluxQLStreamedAnswers(t *testing.T) {
	f := newFixture(t, server.Options{})
	writeFan(t, f, 1000)
	q := "SELECT * FROM fan GROUP BY *; SELECT nope(v) FROM fan; SHOW DATABASES; " +
		"SELECT mean(v) FROM fan WHERE time > now() - 1d GROUP BY time(1h), * fill(null) SLIMIT 40; SELECT v FROM fan WHERE host = 'none'"
	stmts, err := influxql.Parse(q, nil)
	require.NoError(t, err)
	whole, errs := influxql.Execute(context.Background(), f.db, "acme", stmts, influxql.Options{Now: now, Database: "fan"})
	require.NotNil(t, errs[1])
	require.Contains(t, whole[1].Error, "nope() is not supported")

	for _, pretty := range []bool{false, true} {
		var want []byte
		if pretty {
			want, err = json.MarshalIndent(api.InfluxQLResponse{Results: whole}, "", "    ")
		} else {
			want, err = json.Marshal(api.InfluxQLResponse{Results: whole})
		}
		require.NoError(t, err)
		require.Greater(t, len(want), 2*64<<10, "the answer is streamed past what it keeps")
		params := url.Values{"db": {"fan"}, "q": {q}}
		if pretty {
			params.Set("pretty", "true")
		}
		res := f.do("GET", "/query?"+params.Encode(), f.acme, nil)
		require.Equal(t, http.StatusOK, res.status)
		require.Equal(t, string(want)+"\n", string(res.body), "pretty %v", pretty)
	}

	var want strings.Builder
	for _, r := range wholeChunks(whole, 7) {
		b, err := json.Marshal(api.InfluxQLResponse{Results: []api.InfluxQLResult{r}})
		require.NoError(t, err)
		want.Write(append(b, '\n'))
	}
	res := f.do("GET", "/query?"+url.Values{"db": {"fan"}, "q": {q}, "chunked": {"true"}, "chunk_size": {"7"}}.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Equal(t, want.String(), string(res.body))
}

// wholeChunks cuts whole results as InfluxDB's chunked answers do: a
// result per document, a series cut every size rows, every part but a
// statement's last marked partial.
func wholeChunks(results []api.InfluxQLResult, size int) []api.InfluxQLResult {
	var out []api.InfluxQLResult
	for _, res := range results {
		if res.Error != "" || len(res.Series) == 0 {
			out = append(out, res)
			continue
		}
		for i, s := range res.Series {
			values := s.Values
			for {
				part := s
				part.Values = values[:min(size, len(values))]
				values = values[len(part.Values):]
				part.Partial = len(values) > 0 || s.Partial
				out = append(out, api.InfluxQLResult{StatementID: res.StatementID, Series: []api.InfluxQLSeries{part},
					Partial: len(values) > 0 || i < len(res.Series)-1})
				if len(values) == 0 {
					break
				}
			}
		}
	}
	return out
}

// A statement refused for its tenant's share of the query budget fails
// the request with 429 and Retry-After while nothing of the answer has
// been sent, and is the statement's error in its result once the answer
// has begun, the statements before it answered.
func TestInfluxQLShareHeldMidAnswer(t *testing.T) {
	store, cfg := backend.Open(t)
	f := newFixtureEngine(t, store, cfg, prometheus.NewRegistry(), server.Options{AdminToken: adminToken},
		engine.Options{QueryBudgetWait: 20 * time.Millisecond})
	writeFan(t, f, 1000)
	res := f.do("PUT", "/v1/admin/tenants/acme/limits", adminToken, []byte(`{"max_query_partitions": 10}`), "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
	// Another read of acme's holds 9 of its 10 partitions; the aggregate
	// needs 2 (25 rows of 2 columns, 4,000 bytes), a raw SELECT of one
	// row a series 1.
	other := f.db.QueryHold(engine.WithTenantQueryPartitions(context.Background(), 10), "acme")
	require.NoError(t, other.Resize(context.Background(), 9*engine.QueryPartitionBytes))
	defer other.Release()
	agg := "SELECT mean(v) FROM fan WHERE host = 'h000007' AND time > now() - 1d GROUP BY time(1h)"

	res = f.do("GET", "/query?"+url.Values{"db": {"fan"}, "q": {"SHOW DATABASES; " + agg}}.Encode(), f.acme, nil)
	require.Equal(t, http.StatusTooManyRequests, res.status, "body: %s", res.body)
	require.NotEmpty(t, res.header.Get("Retry-After"))
	require.Contains(t, string(res.body), "max_query_partitions = 10")

	res = f.do("GET", "/query?"+url.Values{"db": {"fan"}, "q": {"SELECT * FROM fan GROUP BY * LIMIT 1; " + agg}}.Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, res.status, "body: %.300s", res.body)
	var out api.InfluxQLResponse
	require.NoError(t, json.Unmarshal(res.body, &out))
	require.Len(t, out.Results, 2)
	require.Len(t, out.Results[0].Series, 1000)
	require.Empty(t, out.Results[0].Error)
	require.Contains(t, out.Results[1].Error, "max_query_partitions = 10")
	require.Empty(t, out.Results[1].Series)
}

// gatedStore holds back the reads of one series' events, once armed,
// until released: a store that has not yet given the server a
// statement's last series.
type gatedStore struct {
	storage.Store
	series  string        // the series whose reads wait
	armed   atomic.Bool   // set once the reads are to wait
	reached chan struct{} // closed when its first read waits
	release chan struct{} // closed to let its reads go on
	once    sync.Once
	// held tells whether the wait ran out: fuzzInputTimeout bounds the
	// wait of a server that never sends what its client waits for, far
	// above what any answer takes, a hang's bound rather than a measure.
	held atomic.Bool
}

func (s *gatedStore) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if parts := strings.Split(q.PK, "#"); s.armed.Load() && len(parts) == 4 && parts[0] == "acme" && parts[2] == s.series {
		s.once.Do(func() { close(s.reached) })
		select {
		case <-s.release:
		case <-time.After(fuzzInputTimeout):
			s.held.Store(true)
		}
	}
	return s.Store.Query(ctx, q)
}

// A chunked answer reaches its client chunk by chunk, through every
// writer the server wraps the answer in (the request log's, promhttp's):
// the first chunk of the first series is read by the client while the
// store holds back the events of the last series, so before the server
// has built the last chunk; the answer then goes on to its end, the same
// documents as the whole answer cut in chunks.
func TestInfluxQLChunksAreSentAsTheyAreBuilt(t *testing.T) {
	store, cfg := backend.Open(t)
	gated := &gatedStore{Store: store, series: "host=h000002", reached: make(chan struct{}), release: make(chan struct{})}
	f := newFixtureOn(t, gated, cfg, prometheus.NewRegistry(), server.Options{})
	writeFan(t, f, 3)
	q := "SELECT v FROM fan GROUP BY host"
	stmts, err := influxql.Parse(q, nil)
	require.NoError(t, err)
	whole, _ := influxql.Execute(context.Background(), f.db, "acme", stmts, influxql.Options{Now: now, Database: "fan"})
	require.Len(t, whole[0].Series, 3)
	var want []string
	for _, r := range wholeChunks(whole, 1) {
		b, err := json.Marshal(api.InfluxQLResponse{Results: []api.InfluxQLResult{r}})
		require.NoError(t, err)
		want = append(want, string(b))
	}
	require.Len(t, want, 9, "three series of three rows, a chunk a row")

	gated.armed.Store(true)
	req, err := http.NewRequest("GET", f.url+"/query?"+url.Values{"db": {"fan"}, "q": {q}, "chunked": {"true"}, "chunk_size": {"1"}}.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.acme)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	<-gated.reached // the server waits for the last series
	lines := bufio.NewScanner(res.Body)
	require.True(t, lines.Scan(), "the first chunk: %v", lines.Err())
	require.False(t, gated.held.Load(), "the first chunk reached the client only once the last series was read")
	close(gated.release)
	got := []string{lines.Text()}
	for lines.Scan() {
		got = append(got, lines.Text())
	}
	require.NoError(t, lines.Err())
	require.Equal(t, want, got)
}
