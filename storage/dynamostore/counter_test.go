package dynamostore

import (
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// requestCounter counts the HTTP requests a client sends, by operation,
// retries included (count), and the calls they are attempts of (calls: a
// loaded server's retried request is still one call).
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
	firsts map[string]int
}

// install wraps the client's HTTP client; use it in Options.ClientOptions.
func (c *requestCounter) install(o *dynamodb.Options) {
	o.HTTPClient = countingClient{next: o.HTTPClient, counter: c}
}

func (c *requestCounter) add(target string, first bool) {
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		target = target[i+1:]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts, c.firsts = make(map[string]int), make(map[string]int)
	}
	c.counts[target]++
	if first {
		c.firsts[target]++
	}
}

// calls returns the calls of op: first attempts, as the SDK's
// Amz-Sdk-Request header numbers them.
func (c *requestCounter) calls(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firsts[op]
}

func (c *requestCounter) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[op]
}

func (c *requestCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts, c.firsts = nil, nil
}

type countingClient struct {
	next    aws.HTTPClient
	counter *requestCounter
}

func (c countingClient) Do(req *http.Request) (*http.Response, error) {
	// "attempt=1", then "; max=N" when the retryer has an attempt count
	// (the store's has none: its retryBudget ends the retries).
	attempt, _, _ := strings.Cut(req.Header.Get("Amz-Sdk-Request"), ";")
	c.counter.add(req.Header.Get("X-Amz-Target"), attempt == "attempt=1")
	return c.next.Do(req)
}
