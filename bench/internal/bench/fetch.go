package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// peerHTTP is the HTTP client of a peer's server: one connection per
// writer kept alive, as a client library would.
func peerHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: peerClients * 2}}
}

// send sends a request and returns the body of a 2xx answer, or an error
// with the start of any other.
func send(ctx context.Context, client *http.Client, method, url string, header http.Header, body []byte) (io.ReadCloser, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(msg))
	}
	return resp.Body, nil
}

// fetch sends a request and decodes a 2xx answer's JSON into into, numbers
// as json.Number; a nil into discards the body.
func fetch(ctx context.Context, client *http.Client, method, url string, header http.Header, body []byte, into any) error {
	answer, err := send(ctx, client, method, url, header, body)
	if err != nil {
		return err
	}
	defer answer.Close()
	if into == nil {
		_, err := io.Copy(io.Discard, answer)
		return err
	}
	dec := json.NewDecoder(answer)
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	// The decoder stops at the value's end: what follows (a newline) is
	// read too, since a body closed unread closes its connection, and
	// the next request would open another.
	_, err = io.Copy(io.Discard, answer)
	return err
}
