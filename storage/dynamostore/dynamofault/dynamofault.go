// Package dynamofault injects the failures of a real DynamoDB endpoint
// into a client's HTTP traffic, for tests: throttling errors, partial
// UnprocessedItems, 500s, dropped connections and requests never
// answered. It is an http.RoundTripper
// to set as the HTTPClient of a DynamoDB client (dynamodb.Options), in
// front of a real server such as dynalite.
//
// The package also stands in for what no local server has of DynamoDB's
// control plane: ControlPlane, another http.RoundTripper, keeps
// DynamoDB's limits on how often a table changes and records and answers
// the settings the servers ignore (table class, throughput limits,
// deletion protection, point-in-time recovery); AutoScaling is a
// recording fake of Application Auto Scaling (dynamostore.AutoScaler).
//
// Decisions about faults:
//
//   - The schedule is seeded and does not depend on goroutine timing: the
//     fault a request gets is a function of the seed, the request body and
//     how many times that same body was sent before. A run with a given
//     seed injects the same faults into the same requests however the
//     client's goroutines interleave; a retried request draws anew.
//   - Faults are answered the way DynamoDB answers: a 400 with the JSON
//     error body and __type DynamoDB uses, a 500 InternalServerError, a 200
//     whose UnprocessedItems holds the items withheld from the server, with
//     X-Amz-Crc32 recomputed so the SDK's checksum check passes.
//   - A server that never answers (Hang) holds the request until its
//     context ends: the client's deadline is what ends the call.
//   - A dropped connection is an error from RoundTrip, which is what the
//     SDK sees when a connection resets. DropAfter forwards the request
//     first: the write happened, the client never learns it. The keys of
//     items written that way are recorded (Ambiguous), so a test can tell
//     an item reported unwritten but present from a lost acknowledgement.
//     So are the items of a BatchWriteItem request forwarded whose answer
//     the client never got whole, because its context ended while the
//     request was in flight: the server may have written them. The answer
//     of a BatchWriteItem request is read whole before it is handed on,
//     so a client that got one got all of it.
//   - Only requests whose operation is listed in Options.Operations get
//     faults (all of them when the list is empty); UnprocessedItems applies
//     to BatchWriteItem only and other requests pass through instead.
package dynamofault

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/timetabledb/timetable/storage"
)

// Fault is one kind of failure.
type Fault int

// The faults a Transport injects.
const (
	// None forwards the request untouched.
	None Fault = iota
	// Throughput answers 400 ProvisionedThroughputExceededException
	// without forwarding.
	Throughput
	// Throttling answers 400 ThrottlingException without forwarding.
	Throttling
	// Unprocessed forwards a BatchWriteItem request with only some of its
	// items, chosen by the schedule, and answers the others as
	// UnprocessedItems.
	Unprocessed
	// ServerError answers 500 InternalServerError without forwarding.
	ServerError
	// DropBefore fails the round trip as a reset connection, without
	// forwarding.
	DropBefore
	// DropAfter forwards the request, discards the answer and fails the
	// round trip as a reset connection.
	DropAfter
	// TableLimit answers a CreateTable request 400 LimitExceededException
	// (with Options.LimitMessage) without forwarding; other requests pass
	// through.
	TableLimit
	// Hang holds the request without forwarding it, and answers nothing
	// until the request's context ends: a server that never answers. The
	// round trip then fails with the context's error.
	Hang

	numFaults
)

var faultNames = [numFaults]string{"None", "Throughput", "Throttling", "Unprocessed", "ServerError", "DropBefore", "DropAfter", "TableLimit", "Hang"}

// DefaultLimitMessage is the message of a TableLimit answer when
// Options.LimitMessage is empty: DynamoDB's for the limit on table
// operations at once.
const DefaultLimitMessage = "Subscriber limit exceeded: Only 500 tables can be created, updated, or deleted simultaneously"

// String returns the fault's name.
func (f Fault) String() string {
	if f < 0 || f >= numFaults {
		return "Fault(" + strconv.Itoa(int(f)) + ")"
	}
	return faultNames[f]
}

// Mix gives the probability, between 0 and 1, that a request gets each
// fault. The probabilities add up to at most 1; the rest is None.
type Mix map[Fault]float64

// Options configure a Transport.
type Options struct {
	// Seed selects the schedule.
	Seed uint64
	// Mix is the probability of each fault.
	Mix Mix
	// Operations lists the DynamoDB operations (the part of X-Amz-Target
	// after the dot, e.g. "BatchWriteItem") that get faults; empty for
	// all.
	Operations []string
	// Next carries the requests forwarded. Default http.DefaultTransport.
	Next http.RoundTripper
	// ThrottlingReasons, when set, are the reasons the Throughput and
	// Throttling answers give, as DynamoDB has since 2025 (e.g.
	// "TableWriteKeyRangeThroughputExceeded"), each with the table's ARN
	// as the resource.
	ThrottlingReasons []string
	// LimitMessage is the message of a TableLimit answer; default
	// DefaultLimitMessage.
	LimitMessage string
}

// Key names an item by table and key attributes (storage.PKAttr and
// storage.SKAttr).
type Key struct {
	Table, PK, SK string
}

// Transport is an http.RoundTripper that injects faults. It may be used
// by any number of goroutines at once.
type Transport struct {
	opts Options
	// cumulative holds the upper bound of each fault's probability slice.
	cumulative [numFaults]float64

	mu struct {
		sync.Mutex
		seen      map[[32]byte]int
		counts    [numFaults]int
		ambiguous map[Key]bool
	}
}

// New returns a Transport. It panics when the probabilities of opts.Mix
// are negative or add up to more than 1, a mistake in the test.
func New(opts Options) *Transport {
	if opts.Next == nil {
		opts.Next = http.DefaultTransport
	}
	t := &Transport{opts: opts}
	var sum float64
	for f := None + 1; f < numFaults; f++ {
		p := opts.Mix[f]
		if p < 0 {
			panic(fmt.Sprintf("dynamofault: negative probability %v for %v", p, f))
		}
		sum += p
		t.cumulative[f] = sum
	}
	if sum > 1 {
		panic(fmt.Sprintf("dynamofault: probabilities add up to %v", sum))
	}
	t.mu.seen = make(map[[32]byte]int)
	t.mu.ambiguous = make(map[Key]bool)
	return t
}

// Counts returns how many requests got each fault so far.
func (t *Transport) Counts() map[Fault]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[Fault]int, numFaults)
	for f, n := range t.mu.counts {
		if n > 0 {
			out[Fault(f)] = n
		}
	}
	return out
}

// Ambiguous returns the keys of the items of BatchWriteItem requests that
// were forwarded and whose answer the client did not get: dropped
// (DropAfter), where the server wrote them and the client was told the
// connection failed, or cut short when the request's context ended, where
// the server may have written them.
func (t *Transport) Ambiguous() map[Key]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[Key]bool, len(t.mu.ambiguous))
	for k := range t.mu.ambiguous {
		out[k] = true
	}
	return out
}

// errDropped is the error of a dropped connection. Its text contains
// "connection reset", as a real one does.
var errDropped = errors.New("dynamofault: read: connection reset by peer")

// RoundTrip forwards the request, or injects the fault the schedule
// assigns to it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("dynamofault: read request body: %w", err)
		}
	}
	operation := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(operation, '.'); i >= 0 {
		operation = operation[i+1:]
	}
	rng := t.draw(body)
	fault := None
	if len(t.opts.Operations) == 0 || slices.Contains(t.opts.Operations, operation) {
		fault = t.pick(rng.Float64())
	}
	if (fault == Unprocessed && operation != "BatchWriteItem") || (fault == TableLimit && operation != "CreateTable") {
		fault = None
	}
	t.mu.Lock()
	t.mu.counts[fault]++
	t.mu.Unlock()

	switch fault {
	case Throughput:
		return t.throttled(req, body, "ProvisionedThroughputExceededException", "ThrottlingReasons",
			"The level of configured provisioned throughput for the table was exceeded."), nil
	case Throttling:
		return t.throttled(req, body, "ThrottlingException", "throttlingReasons", "Rate of requests exceeds the allowed throughput."), nil
	case TableLimit:
		msg := t.opts.LimitMessage
		if msg == "" {
			msg = DefaultLimitMessage
		}
		return errorResponse(req, http.StatusBadRequest, "LimitExceededException", msg), nil
	case ServerError:
		return errorResponse(req, http.StatusInternalServerError, "InternalServerError", "Internal server error"), nil
	case DropBefore:
		return nil, errDropped
	case Hang:
		<-req.Context().Done()
		return nil, req.Context().Err()
	case DropAfter:
		resp, err := t.forward(req, body)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && operation == "BatchWriteItem" {
			t.recordAmbiguous(body)
		}
		return nil, errDropped
	case Unprocessed:
		return t.unprocessed(req, body, rng)
	default:
		if operation == "BatchWriteItem" {
			return t.forwardBatch(req, body)
		}
		return t.forward(req, body)
	}
}

// forwardBatch forwards a BatchWriteItem request and reads its answer
// whole; when either fails (the request's context ended, say), the items
// sent are recorded as ambiguous.
func (t *Transport) forwardBatch(req *http.Request, body []byte) (*http.Response, error) {
	resp, err := t.forward(req, body)
	if err != nil {
		t.recordAmbiguous(body)
		return nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.recordAmbiguous(body)
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	return resp, nil
}

// draw returns the random stream of this request: a function of the seed,
// the body and how many times the body was seen before.
func (t *Transport) draw(body []byte) *rand.Rand {
	sum := sha256.Sum256(body)
	t.mu.Lock()
	nth := t.mu.seen[sum]
	t.mu.seen[sum] = nth + 1
	t.mu.Unlock()
	return rand.New(rand.NewPCG(t.opts.Seed^binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])+uint64(nth)))
}

// pick returns the fault whose probability slice holds u.
func (t *Transport) pick(u float64) Fault {
	for f := None + 1; f < numFaults; f++ {
		if u < t.cumulative[f] {
			return f
		}
	}
	return None
}

// forward sends the request on with the given body.
func (t *Transport) forward(req *http.Request, body []byte) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.opts.Next.RoundTrip(out)
}

// batchWrite is the part of a BatchWriteItem request or answer this
// package reads; items stay raw JSON.
type batchWrite struct {
	RequestItems     map[string][]json.RawMessage `json:"RequestItems,omitempty"`
	UnprocessedItems map[string][]json.RawMessage `json:"UnprocessedItems,omitempty"`
}

// unprocessed forwards some of a BatchWriteItem request's items and answers
// the rest as unprocessed.
func (t *Transport) unprocessed(req *http.Request, body []byte, rng *rand.Rand) (*http.Response, error) {
	var in map[string]json.RawMessage
	var batch batchWrite
	if err := json.Unmarshal(body, &in); err != nil {
		return t.forward(req, body)
	}
	if err := json.Unmarshal(body, &batch); err != nil || len(batch.RequestItems) == 0 {
		return t.forward(req, body)
	}
	kept := make(map[string][]json.RawMessage)
	withheld := make(map[string][]json.RawMessage)
	for _, table := range slices.Sorted(maps.Keys(batch.RequestItems)) {
		reqs := batch.RequestItems[table]
		// Keep 0 to len-1 of them, so at least one is withheld.
		keep := rng.IntN(len(reqs))
		order := rng.Perm(len(reqs))
		for i, j := range order {
			if i < keep {
				kept[table] = append(kept[table], reqs[j])
			} else {
				withheld[table] = append(withheld[table], reqs[j])
			}
		}
	}

	// The server's answer is kept whole (ConsumedCapacity, ItemCollectionMetrics),
	// with the withheld items added to its UnprocessedItems.
	answer := map[string]json.RawMessage{}
	unprocessed := map[string][]json.RawMessage{}
	header := http.Header{}
	if len(kept) > 0 {
		raw, err := json.Marshal(kept)
		if err != nil {
			return nil, fmt.Errorf("dynamofault: %w", err)
		}
		in["RequestItems"] = raw
		fwdBody, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("dynamofault: %w", err)
		}
		fwd := req.Clone(req.Context())
		fwd.Header.Del("Accept-Encoding")
		resp, err := t.forwardBatch(fwd, fwdBody)
		if err != nil {
			return nil, err
		}
		respBody, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body = io.NopCloser(bytes.NewReader(respBody))
			return resp, nil
		}
		var served batchWrite
		if err := json.Unmarshal(respBody, &answer); err != nil {
			return nil, fmt.Errorf("dynamofault: decode BatchWriteItem answer: %w", err)
		}
		if err := json.Unmarshal(respBody, &served); err != nil {
			return nil, fmt.Errorf("dynamofault: decode BatchWriteItem answer: %w", err)
		}
		if served.UnprocessedItems != nil {
			unprocessed = served.UnprocessedItems
		}
		header = resp.Header.Clone()
	}
	for table, reqs := range withheld {
		unprocessed[table] = append(unprocessed[table], reqs...)
	}
	raw, err := json.Marshal(unprocessed)
	if err != nil {
		return nil, fmt.Errorf("dynamofault: %w", err)
	}
	answer["UnprocessedItems"] = raw
	out, err := json.Marshal(answer)
	if err != nil {
		return nil, fmt.Errorf("dynamofault: %w", err)
	}
	return response(req, http.StatusOK, header, out), nil
}

// recordAmbiguous notes the keys of the items of a BatchWriteItem request.
func (t *Transport) recordAmbiguous(body []byte) {
	var batch struct {
		RequestItems map[string][]struct {
			PutRequest *struct {
				Item map[string]struct{ S string }
			}
		}
	}
	if json.Unmarshal(body, &batch) != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for table, reqs := range batch.RequestItems {
		for _, r := range reqs {
			if r.PutRequest != nil {
				t.mu.ambiguous[Key{Table: table, PK: r.PutRequest.Item[storage.PKAttr].S, SK: r.PutRequest.Item[storage.SKAttr].S}] = true
			}
		}
	}
}

// throttled is a throttling answer, with the reasons of Options as
// DynamoDB sends them: a list named field of {reason, resource}.
func (t *Transport) throttled(req *http.Request, body []byte, code, field, message string) *http.Response {
	if len(t.opts.ThrottlingReasons) == 0 {
		return errorResponse(req, http.StatusBadRequest, code, message)
	}
	var in struct {
		TableName    string
		RequestItems map[string]json.RawMessage
	}
	_ = json.Unmarshal(body, &in)
	table := in.TableName
	for name := range in.RequestItems {
		table = name
	}
	type reason struct {
		Reason   string `json:"reason"`
		Resource string `json:"resource"`
	}
	var reasons []reason
	for _, r := range t.opts.ThrottlingReasons {
		reasons = append(reasons, reason{r, "arn:aws:dynamodb:us-east-1:123456789012:table/" + table})
	}
	out, _ := json.Marshal(map[string]any{
		"__type":  "com.amazonaws.dynamodb.v20120810#" + code,
		"message": message,
		field:     reasons,
	})
	return response(req, http.StatusBadRequest, http.Header{}, out)
}

// errorResponse is a DynamoDB error answer.
func errorResponse(req *http.Request, status int, code, message string) *http.Response {
	body, _ := json.Marshal(map[string]string{
		"__type":  "com.amazonaws.dynamodb.v20120810#" + code,
		"message": message,
	})
	return response(req, status, http.Header{}, body)
}

// response builds an answer with DynamoDB's headers, the checksum
// recomputed.
func response(req *http.Request, status int, header http.Header, body []byte) *http.Response {
	header.Set("Content-Type", "application/x-amz-json-1.0")
	header.Set("Content-Length", strconv.Itoa(len(body)))
	header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	header.Del("Content-Encoding")
	if header.Get("X-Amzn-Requestid") == "" {
		header.Set("X-Amzn-Requestid", "dynamofault")
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
