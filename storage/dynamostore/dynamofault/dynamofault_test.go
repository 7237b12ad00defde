package dynamofault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// server is a stand-in for DynamoDB that records the items it receives
// and processes them all.
type server struct {
	mu       sync.Mutex
	received []string // sort keys
	requests int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in batchWrite
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	for _, reqs := range in.RequestItems {
		for _, raw := range reqs {
			s.received = append(s.received, sortKey(raw))
		}
	}
	s.mu.Unlock()
	out := []byte(`{"UnprocessedItems":{}}`)
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
	w.Write(out)
}

func sortKey(raw json.RawMessage) string {
	var r struct {
		PutRequest struct{ Item map[string]struct{ S string } }
	}
	json.Unmarshal(raw, &r)
	return r.PutRequest.Item["sk"].S
}

// batchBody is a BatchWriteItem request of n items to table t.
func batchBody(n int) []byte {
	var reqs []string
	for i := range n {
		reqs = append(reqs, fmt.Sprintf(`{"PutRequest":{"Item":{"pk":{"S":"p"},"sk":{"S":"%03d"}}}}`, i))
	}
	return []byte(`{"RequestItems":{"t":[` + join(reqs) + `]}}`)
}

func join(s []string) string {
	var b bytes.Buffer
	for i, e := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e)
	}
	return b.String()
}

func send(t *testing.T, tr http.RoundTripper, url, op string, body []byte) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	return tr.RoundTrip(req)
}

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		fault     Fault
		status    int
		code      string
		dropped   bool
		forwarded bool
	}{
		{Throughput, 400, "ProvisionedThroughputExceededException", false, false},
		{Throttling, 400, "ThrottlingException", false, false},
		{ServerError, 500, "InternalServerError", false, false},
		{DropBefore, 0, "", true, false},
		{DropAfter, 0, "", true, true},
		{None, 200, "", false, true},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			srv := &server{}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			tr := New(Options{Mix: Mix{tc.fault: 1}})
			if tc.fault == None {
				tr = New(Options{})
			}
			resp, err := send(t, tr, ts.URL, "BatchWriteItem", batchBody(3))
			require.Equal(t, map[Fault]int{tc.fault: 1}, tr.Counts())
			require.Equal(t, tc.forwarded, srv.requests == 1, "forwarded")
			if tc.dropped {
				require.ErrorContains(t, err, "connection reset")
				if tc.forwarded {
					require.Equal(t, map[Key]bool{{"t", "p", "000"}: true, {"t", "p", "001"}: true, {"t", "p", "002"}: true}, tr.Ambiguous())
				} else {
					require.Empty(t, tr.Ambiguous())
				}
				return
			}
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tc.code != "" {
				var e struct {
					Type string `json:"__type"`
				}
				require.NoError(t, json.Unmarshal(body, &e))
				require.Equal(t, "com.amazonaws.dynamodb.v20120810#"+tc.code, e.Type)
				require.Equal(t, strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10), resp.Header.Get("X-Amz-Crc32"))
			}
		})
	}
}

func TestUnprocessed(t *testing.T) {
	for seed := range uint64(20) {
		srv := &server{}
		ts := httptest.NewServer(srv)
		tr := New(Options{Seed: seed, Mix: Mix{Unprocessed: 1}})
		resp, err := send(t, tr, ts.URL, "BatchWriteItem", batchBody(25))
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		ts.Close()
		require.Equal(t, strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10), resp.Header.Get("X-Amz-Crc32"), "checksum of the new body")

		var out batchWrite
		require.NoError(t, json.Unmarshal(body, &out))
		require.NotEmpty(t, out.UnprocessedItems["t"], "at least one item withheld")
		// Received and unprocessed items are disjoint and make up the
		// request.
		seen := map[string]int{}
		for _, sk := range srv.received {
			seen[sk]++
		}
		for _, raw := range out.UnprocessedItems["t"] {
			seen[sortKey(raw)]++
		}
		require.Len(t, seen, 25)
		for sk, n := range seen {
			require.Equal(t, 1, n, "item %s once", sk)
		}
	}
}

func TestScheduleIsSeeded(t *testing.T) {
	mix := Mix{Throughput: 0.2, ServerError: 0.2, DropBefore: 0.2}
	run := func(seed uint64) []Fault {
		srv := &server{}
		ts := httptest.NewServer(srv)
		defer ts.Close()
		tr := New(Options{Seed: seed, Mix: mix})
		var faults []Fault
		for i := range 40 {
			// Each body twice: a retry draws anew.
			for range 2 {
				before := tr.Counts()
				resp, err := send(t, tr, ts.URL, "BatchWriteItem", batchBody(1+i%5))
				if err == nil {
					resp.Body.Close()
				}
				after := tr.Counts()
				for f := range numFaults {
					if after[f] != before[f] {
						faults = append(faults, f)
					}
				}
			}
		}
		return faults
	}
	a, b, c := run(7), run(7), run(8)
	require.Equal(t, a, b, "same seed, same faults")
	require.NotEqual(t, a, c, "another seed, other faults")
	require.Contains(t, a, None)
	require.Contains(t, a, DropBefore)
}

func TestOperationsFilter(t *testing.T) {
	srv := &server{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tr := New(Options{Mix: Mix{ServerError: 1}, Operations: []string{"BatchWriteItem"}})
	resp, err := send(t, tr, ts.URL, "GetItem", batchBody(1))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "not a listed operation")

	// Unprocessed applies to BatchWriteItem only.
	tr = New(Options{Mix: Mix{Unprocessed: 1}})
	resp, err = send(t, tr, ts.URL, "PutItem", batchBody(1))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, map[Fault]int{None: 1}, tr.Counts())
}

func TestMixValidated(t *testing.T) {
	require.Panics(t, func() { New(Options{Mix: Mix{Throughput: 0.6, DropAfter: 0.6}}) })
	require.Panics(t, func() { New(Options{Mix: Mix{Throughput: -0.1}}) })
}

// TestCutShortIsAmbiguous sends a BatchWriteItem request whose context
// ends while the server holds it, after the server received its items:
// they are recorded as ambiguous, while those of a request answered in
// time are not.
func TestCutShortIsAmbiguous(t *testing.T) {
	for _, fault := range []Fault{None, Unprocessed} {
		t.Run(fault.String(), func(t *testing.T) {
			srv := &server{}
			var hold atomic.Bool
			received := make(chan struct{}, 1)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !hold.Load() {
					srv.ServeHTTP(w, r)
					return
				}
				io.ReadAll(r.Body)
				received <- struct{}{}
				<-r.Context().Done()
			}))
			defer ts.Close()
			tr := New(Options{Seed: 1, Mix: Mix{fault: 1}})
			resp, err := send(t, tr, ts.URL, "BatchWriteItem", batchBody(25))
			require.NoError(t, err)
			resp.Body.Close()
			require.Empty(t, tr.Ambiguous(), "an answer that came whole")

			hold.Store(true)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-received
				cancel()
			}()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, bytes.NewReader(batchBody(25)))
			require.NoError(t, err)
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810.BatchWriteItem")
			_, err = tr.RoundTrip(req)
			require.ErrorIs(t, err, context.Canceled)
			ambiguous := tr.Ambiguous()
			require.NotEmpty(t, ambiguous, "the items the server received")
			for k := range ambiguous {
				require.Equal(t, "t", k.Table)
				require.Equal(t, "p", k.PK)
			}
			if fault == None {
				require.Len(t, ambiguous, 25, "every item sent")
			} else {
				require.Less(t, len(ambiguous), 25, "only the items forwarded")
			}
		})
	}
}
