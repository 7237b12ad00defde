package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/api"
)

// Defaults of Options.
const (
	// DefaultAttempts is how many times a request answered 503 with
	// Retry-After is sent in all.
	DefaultAttempts = 4
	// DefaultMaxRetryWait bounds the wait before sending a request again,
	// whatever Retry-After asks.
	DefaultMaxRetryWait = 10 * time.Second
)

// Options configure a Client. The zero value of each field is its
// default.
type Options struct {
	// HTTPClient sends the requests; nil means a new http.Client of its
	// own, without a timeout (the context bounds each call).
	HTTPClient *http.Client
	// Attempts is how many times a request answered 503 with Retry-After
	// is sent in all: 1 never sends one again. Zero means
	// DefaultAttempts.
	Attempts int
	// MaxRetryWait bounds the wait between two attempts. Zero means
	// DefaultMaxRetryWait.
	MaxRetryWait time.Duration
}

// EnsureDefaults fills the zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
	if o.MaxRetryWait == 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
}

// Validate refuses options no default can mend.
func (o *Options) Validate() error {
	if o.Attempts < 0 {
		return fmt.Errorf("timetable: client: Attempts %d is negative", o.Attempts)
	}
	if o.MaxRetryWait < 0 {
		return fmt.Errorf("timetable: client: MaxRetryWait %s is negative", o.MaxRetryWait)
	}
	return nil
}

// Client is a client of one server's HTTP API, with one credential.
type Client struct {
	base  string // the server's URL, without a slash at the end
	token string
	opts  Options
}

// New returns a client of the server at baseURL (http://HOST:PORT or
// https://HOST:PORT, maybe with a path prefix), sending token, a
// tenant's API key or the admin token, as "Authorization: Bearer
// <token>". opts may be nil for the defaults.
func New(baseURL, token string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("timetable: client: server URL %q: use http://HOST:PORT or https://HOST:PORT", baseURL)
	}
	if token == "" {
		return nil, errors.New("timetable: client: no API key or admin token")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	u.RawQuery, u.Fragment = "", ""
	return &Client{base: strings.TrimSuffix(u.String(), "/"), token: token, opts: o}, nil
}

// URL returns the server's URL, as New was given it without a slash at
// the end.
func (c *Client) URL() string { return c.base }

// Error is an answer of the server that is not 2xx.
type Error struct {
	// Status is the HTTP status, Code its class (api.CodeOf).
	Status int
	Code   string
	// Message is the server's words (Body.Error), or for an answer not
	// in the API's JSON (a proxy's) the status and the start of the
	// body.
	Message string
	// RetryAfter is the wait a 503 asked for, 0 when it asked none.
	RetryAfter time.Duration
	// Body is the error body as the server sent it: the refused events
	// or lines of a write, and what a write that failed part-way stored.
	Body api.ErrorBody
}

// Error returns the server's message.
func (e *Error) Error() string { return e.Message }

// path returns a path pattern of package api with its wildcards set to
// args, in order, each escaped: path(api.PathKey, "acme", "k1") is
// /v1/admin/tenants/acme/keys/k1.
func path(pattern string, args ...string) string {
	var b strings.Builder
	for seg := range strings.SplitSeq(strings.TrimPrefix(pattern, "/"), "/") {
		b.WriteByte('/')
		if strings.HasPrefix(seg, "{") {
			b.WriteString(url.PathEscape(args[0]))
			args = args[1:]
			continue
		}
		b.WriteString(seg)
	}
	return b.String()
}

// do sends a request to path with params and, when body is not nil, body
// as contentType; it decodes a 2xx answer's JSON into out, numbers as
// json.Number, and sends the request again while the server answers 503
// with Retry-After, within Options.Attempts.
func (c *Client) do(ctx context.Context, method, path string, params url.Values, contentType string, body []byte, out any) error {
	target := c.base + path
	if len(params) > 0 {
		target += "?" + params.Encode()
	}
	for attempt := 1; ; attempt++ {
		err := c.once(ctx, method, target, contentType, body, out)
		var e *Error
		if !errors.As(err, &e) || e.RetryAfter == 0 || attempt >= c.opts.Attempts {
			return err
		}
		t := time.NewTimer(min(e.RetryAfter, c.opts.MaxRetryWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// once sends a request once.
func (c *Client) once(ctx context.Context, method, target, contentType string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return fmt.Errorf("request %s %s: %w", method, target, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reach the server at %s: %w", c.base, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return c.failure(res)
	}
	if out == nil {
		return nil
	}
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("read the answer of %s %s: %w", method, res.Request.URL.Path, err)
	}
	return nil
}

// failure returns the *Error of a non-2xx answer.
func (c *Client) failure(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	e := &Error{Status: res.StatusCode, Code: api.CodeOf(res.StatusCode)}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&e.Body); err != nil || e.Body.Error == "" {
		// Not the server's JSON: a proxy's answer, most likely.
		text := strings.TrimSpace(string(b))
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		e.Body = api.ErrorBody{}
		e.Message = fmt.Sprintf("timetable: the server at %s answered %s: %s", c.base, res.Status, text)
	} else {
		e.Message = e.Body.Error
	}
	if res.StatusCode == http.StatusServiceUnavailable {
		if v := res.Header.Get(api.RetryAfter); v != "" {
			secs, _ := strconv.Atoi(v)
			e.RetryAfter = time.Duration(max(secs, 1)) * time.Second
		}
	}
	return e
}

// marshal encodes a request body.
func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}
