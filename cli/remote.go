package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/server"
)

// The server as a backend of the commands.
//
// With --server URL, or TIMETABLE_SERVER, the commands that read or change
// what a store holds (tenant, write, query, tables, reconcile --dry-run)
// do not open the store: they ask a running `timetable serve` through its
// HTTP API, as any client does, and print what it answers as they print
// what the store holds. So one server can own a Pebble directory while
// the CLI works beside it.
//
// Decisions:
//
//   - The credential comes from the environment, never from a flag (a
//     flag shows in the process list and the shell's history): a tenant's
//     API key in TIMETABLE_API_KEY for write and query, whose tenant it
//     names; the admin token in TIMETABLE_ADMIN_TOKEN for tenant, tables
//     and reconcile --dry-run. A missing one is a usage error naming the
//     variable.
//   - The server's errors are shown as it words them. A 400 is a usage
//     error (the request was wrong, as a bad flag is), except a write's
//     refused events, which write names line by line; a 401 says which
//     credential was refused; the rest are failures.
//   - A 503 is answered with Retry-After only when the same request may
//     succeed later (the store throttled, or the server is busy): every
//     request is sent again, a few times, after the wait it asks for.
//     Writes are idempotent, so sending one again stores nothing twice.

// Environment variables of the commands that go through a server.
const (
	// EnvServer is the URL of the server, when --server is not given.
	EnvServer = "TIMETABLE_SERVER"
	// EnvAPIKey is the tenant's API key write and query send to the
	// server.
	EnvAPIKey = "TIMETABLE_API_KEY"
)

// credential is what a command shows the server: a tenant's API key, or
// the admin token, read from an environment variable.
type credential struct {
	env  string // the variable that holds it
	what string // what it is, in messages
}

var (
	apiKeyCredential     = credential{EnvAPIKey, "API key"}
	adminTokenCredential = credential{EnvAdminToken, "admin token"}
)

// Attempts at a request the server answers 503 with Retry-After, and the
// longest wait between two.
const (
	remoteAttempts = 4
	maxRetryWait   = 10 * time.Second
)

// remote is a client of a running server's HTTP API.
type remote struct {
	// base is the server's URL, without a slash at the end.
	base   string
	cred   credential
	secret string
	client *http.Client
	// maxBodyBytes and maxEvents bound a write request: the server's
	// defaults.
	maxBodyBytes, maxEvents int
}

// serverURL returns --server, or TIMETABLE_SERVER, or "" for neither.
func (g *globals) serverURL() string {
	if g.server != "" {
		return g.server
	}
	return os.Getenv(EnvServer)
}

// remote returns a client of the server --server or TIMETABLE_SERVER
// names, showing it cred; or nil when neither names one, and the command
// opens the store.
func (g *globals) remote(cred credential) (*remote, error) {
	raw := g.serverURL()
	if raw == "" {
		return nil, nil
	}
	if g.storeSpec != "" {
		return nil, usageErrorf("--store %s and --server %s: the server owns its store; give one or the other", g.storeSpec, raw)
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, usageErrorf("--server %q: use the server's URL, http://HOST:PORT or https://HOST:PORT", raw)
	}
	secret := os.Getenv(cred.env)
	if secret == "" {
		return nil, usageErrorf("no %s: set %s to talk to the server at %s", cred.what, cred.env, raw)
	}
	base.RawQuery, base.Fragment = "", ""
	return &remote{base: strings.TrimSuffix(base.String(), "/"), cred: cred, secret: secret, client: &http.Client{},
		maxBodyBytes: server.DefaultMaxBodyBytes, maxEvents: server.DefaultMaxEvents}, nil
}

// refuseServer refuses --server to a command that has no way through a
// server. TIMETABLE_SERVER, a default for the commands that have one, is
// no error: such a command works on the store as always.
func (g *globals) refuseServer(cmd *cobra.Command, why string) error {
	if g.server == "" {
		return nil
	}
	return usageErrorf("%s does not go through a server: %s; leave --server out", cmd.CommandPath(), why)
}

// remoteError is an error answer of the server.
type remoteError struct {
	status int
	// msg is the server's own words.
	msg string
	// problems are the events a write refused, by index in the request.
	problems []event.Problem
}

func (e *remoteError) Error() string { return e.msg }

// call sends a request to path (its segments escaped) and decodes a 2xx
// answer's JSON body into out, numbers as json.Number. body is sent as
// contentType when not nil.
func (r *remote) call(ctx context.Context, method, path string, params url.Values, contentType string, body []byte, out any) error {
	target := r.base + path
	if len(params) > 0 {
		target += "?" + params.Encode()
	}
	for attempt := 1; ; attempt++ {
		err := r.once(ctx, method, target, contentType, body, out)
		var wait retryAfter
		if !errors.As(err, &wait) {
			return err
		}
		if attempt == remoteAttempts {
			return wait.err
		}
		t := time.NewTimer(min(time.Duration(wait.after), maxRetryWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// retryAfter is a 503 to send again after a wait.
type retryAfter struct {
	after time.Duration
	err   error
}

func (e retryAfter) Error() string { return e.err.Error() }

// once sends a request once.
func (r *remote) once(ctx context.Context, method, target, contentType string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return fmt.Errorf("request %s %s: %w", method, target, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.secret)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reach the server at %s (is `timetable serve` running there?): %w", r.base, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 == 2 {
		dec := json.NewDecoder(res.Body)
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return fmt.Errorf("read the answer of %s %s: %w", method, res.Request.URL.Path, err)
		}
		return nil
	}
	return r.failure(res)
}

// failure returns the error of a non-2xx answer.
func (r *remote) failure(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var answer struct {
		Error    string          `json:"error"`
		Problems []event.Problem `json:"problems"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || answer.Error == "" {
		// Not the server's JSON: a proxy's answer, most likely.
		text := strings.TrimSpace(string(b))
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		answer.Error = fmt.Sprintf("timetable: the server at %s answered %s: %s", r.base, res.Status, text)
	}
	err := &remoteError{status: res.StatusCode, msg: answer.Error, problems: answer.Problems}
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("the %s in %s was refused by the server at %s: %s", r.cred.what, r.cred.env, r.base, strings.TrimPrefix(err.msg, "timetable: "))
	case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		return retryAfter{after: time.Duration(max(secs, 1)) * time.Second, err: err}
	case res.StatusCode == http.StatusBadRequest && len(err.problems) == 0:
		return usageError{err}
	}
	return err
}

// escape escapes the segments of a path.
func escape(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// The admin API: tenants and their keys.

func (r *remote) addTenant(ctx context.Context, name string) (keyRow, error) {
	body, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return keyRow{}, err
	}
	var answer struct {
		Key keyRow `json:"key"`
	}
	err = r.call(ctx, http.MethodPost, "/v1/admin/tenants", nil, "application/json", body, &answer)
	return answer.Key, err
}

func (r *remote) tenants(ctx context.Context) ([]tenantRow, error) {
	var answer struct {
		Tenants []tenantRow `json:"tenants"`
	}
	err := r.call(ctx, http.MethodGet, "/v1/admin/tenants", nil, "", nil, &answer)
	return answer.Tenants, err
}

func (r *remote) removeTenant(ctx context.Context, name string, deleteData bool) (engine.Purged, error) {
	data := "keep"
	if deleteData {
		data = "delete"
	}
	var answer struct {
		Tables []string `json:"tables"`
		Items  int64    `json:"items"`
	}
	err := r.call(ctx, http.MethodDelete, escape("v1", "admin", "tenants", name), url.Values{"data": {data}}, "", nil, &answer)
	return engine.Purged{Tables: answer.Tables, Items: answer.Items}, err
}

func (r *remote) keys(ctx context.Context, name string) ([]keyRow, error) {
	var answer struct {
		Keys []keyRow `json:"keys"`
	}
	err := r.call(ctx, http.MethodGet, escape("v1", "admin", "tenants", name, "keys"), nil, "", nil, &answer)
	return answer.Keys, err
}

func (r *remote) addKey(ctx context.Context, name, scope string) (keyRow, error) {
	body, err := json.Marshal(map[string]string{"scope": scope})
	if err != nil {
		return keyRow{}, err
	}
	var key keyRow
	err = r.call(ctx, http.MethodPost, escape("v1", "admin", "tenants", name, "keys"), nil, "application/json", body, &key)
	return key, err
}

func (r *remote) revoke(ctx context.Context, name, id string) (keyRow, error) {
	var key keyRow
	err := r.call(ctx, http.MethodDelete, escape("v1", "admin", "tenants", name, "keys", id), nil, "", nil, &key)
	return key, err
}

func (r *remote) rotate(ctx context.Context, name, id string, grace time.Duration) (rotation, error) {
	req := map[string]string{}
	if grace > 0 {
		req["grace"] = grace.String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return rotation{}, err
	}
	var rot rotation
	err = r.call(ctx, http.MethodPost, escape("v1", "admin", "tenants", name, "keys", id, "rotate"), nil, "application/json", body, &rot)
	return rot, err
}

// The admin API: the physical tables and the lifecycle plan.

func (r *remote) tables(ctx context.Context) ([]engine.TableStatus, error) {
	var answer struct {
		Tables []engine.TableStatus `json:"tables"`
	}
	err := r.call(ctx, http.MethodGet, "/v1/admin/tables", nil, "", nil, &answer)
	return answer.Tables, err
}

func (r *remote) plan(ctx context.Context) ([]lifecycle.Report, error) {
	var answer struct {
		Actions []lifecycle.Report `json:"actions"`
	}
	err := r.call(ctx, http.MethodGet, "/v1/admin/plan", nil, "", nil, &answer)
	return answer.Actions, err
}

// The tenant's API: events and aggregates.

// writeEvents posts events to a logical table as NDJSON, in as many
// requests as the server's default limits on a body and its events ask.
// A request the server refuses for some of its events is a
// *event.BatchError indexed in events, as the engine's would be.
func (r *remote) writeEvents(ctx context.Context, table string, events event.Batch) (int, error) {
	path := escape("v1", "tables", table, "events")
	written := 0
	var body []byte
	first := 0 // the index of body's first event
	send := func(next int) error {
		var answer struct {
			Written int `json:"written"`
		}
		err := r.call(ctx, http.MethodPost, path, nil, "application/x-ndjson", body, &answer)
		var re *remoteError
		if errors.As(err, &re) && len(re.problems) > 0 {
			be := &event.BatchError{Problems: make([]event.Problem, len(re.problems))}
			for i, p := range re.problems {
				be.Problems[i] = event.Problem{Index: first + p.Index, Reason: p.Reason}
			}
			return be
		}
		if err != nil {
			return err
		}
		written += answer.Written
		body, first = body[:0], next
		return nil
	}
	var line []byte
	for i, e := range events.Events() {
		var err error
		if line, err = e.AppendJSON(line[:0]); err != nil {
			return written, err
		}
		full := len(body)+len(line)+1 > r.maxBodyBytes || i-first == r.maxEvents
		if full && len(body) > 0 {
			if err := send(i); err != nil {
				return written, err
			}
		}
		body = append(append(body, line...), '\n')
	}
	if len(body) > 0 {
		if err := send(events.Len()); err != nil {
			return written, err
		}
	}
	return written, nil
}

// eventJSON is an event as the API answers it.
type eventJSON struct {
	Time   string         `json:"time"`
	Series string         `json:"series"`
	ID     string         `json:"id"`
	Fields map[string]any `json:"fields"`
}

// events returns a page of a query's events.
func (r *remote) events(ctx context.Context, table string, params url.Values) (engine.Page, error) {
	var answer struct {
		Events     []eventJSON `json:"events"`
		NextCursor string      `json:"next_cursor"`
	}
	if err := r.call(ctx, http.MethodGet, escape("v1", "tables", table, "events"), params, "", nil, &answer); err != nil {
		return engine.Page{}, err
	}
	page := engine.Page{Events: make([]event.Event, len(answer.Events)), NextCursor: answer.NextCursor}
	for i, j := range answer.Events {
		t, err := time.Parse(time.RFC3339Nano, j.Time)
		if err != nil {
			return engine.Page{}, fmt.Errorf("event %d of the answer: time: %w", i, err)
		}
		e := event.Event{Time: t.UTC(), Series: j.Series, ID: j.ID, Fields: j.Fields}
		if len(e.Fields) == 0 {
			e.Fields = nil
		}
		page.Events[i] = e
	}
	return page, nil
}

// aggregateAnswer is an aggregate as the API answers it: buckets, or a
// page of groups.
type aggregateAnswer struct {
	Buckets   []engine.Bucket `json:"buckets"`
	Groups    []engine.Group  `json:"groups"`
	NextGroup *string         `json:"next_group"`
}

func (r *remote) aggregate(ctx context.Context, table string, params url.Values) (aggregateAnswer, error) {
	var answer aggregateAnswer
	err := r.call(ctx, http.MethodGet, escape("v1", "tables", table, "aggregate"), params, "", nil, &answer)
	return answer, err
}
