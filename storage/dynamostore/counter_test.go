package dynamostore

import (
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// requestCounter counts the HTTP requests a client sends, by operation,
// retries included.
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// install wraps the client's HTTP client; use it in Options.ClientOptions.
func (c *requestCounter) install(o *dynamodb.Options) {
	o.HTTPClient = countingClient{next: o.HTTPClient, counter: c}
}

func (c *requestCounter) add(target string) {
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		target = target[i+1:]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = make(map[string]int)
	}
	c.counts[target]++
}

func (c *requestCounter) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[op]
}

func (c *requestCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = nil
}

type countingClient struct {
	next    aws.HTTPClient
	counter *requestCounter
}

func (c countingClient) Do(req *http.Request) (*http.Response, error) {
	c.counter.add(req.Header.Get("X-Amz-Target"))
	return c.next.Do(req)
}
