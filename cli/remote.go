package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
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
//     request is sent again, a few times, after the wait it asks for
//     (package client does, with its defaults). Writes are idempotent,
//     so sending one again stores nothing twice.
//   - The requests and answers are package api's, sent by package
//     client; this file is the glue between those and the commands.

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

// remote is a client of a running server's HTTP API, as the commands use
// it.
type remote struct {
	// base is the server's URL, without a slash at the end.
	base   string
	cred   credential
	secret string
	// client sends the requests of the client package.
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

// api returns the client of the server, showing it the secret.
func (r *remote) api() (*client.Client, error) {
	return client.New(r.base, r.secret, &client.Options{HTTPClient: r.client})
}

// fail returns an error of the client as the commands show it: a refused
// credential names the variable it came from, a 400 (other than a
// write's refused events) is a usage error, and an unreachable server
// is named with the likely cause.
func (r *remote) fail(err error) error {
	var e *client.Error
	var ue *url.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e) && e.Status == http.StatusUnauthorized:
		return fmt.Errorf("the %s in %s was refused by the server at %s: %s", r.cred.what, r.cred.env, r.base, strings.TrimPrefix(e.Message, "timetable: "))
	case errors.As(err, &e) && e.Status == http.StatusBadRequest && len(e.Body.Problems) == 0:
		return usageError{e}
	case errors.As(err, &e):
		return e
	case errors.As(err, &ue):
		return fmt.Errorf("reach the server at %s (is `timetable serve` running there?): %w", r.base, ue)
	}
	return err
}

// call calls fn with the client of the server, and returns its error as
// the commands show it.
func call[T any](r *remote, fn func(c *client.Client) (T, error)) (T, error) {
	c, err := r.api()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(c)
	return v, r.fail(err)
}

// The admin API: tenants and their keys.

func (r *remote) addTenant(ctx context.Context, name string) (keyRow, error) {
	added, err := call(r, func(c *client.Client) (api.TenantAdded, error) { return c.AddTenant(ctx, name) })
	return added.Key, err
}

func (r *remote) tenants(ctx context.Context) ([]tenantRow, error) {
	tenants, err := call(r, func(c *client.Client) ([]api.Tenant, error) { return c.Tenants(ctx) })
	// The list prints what the store's does: a tenant's limits are
	// tenant limits' to show.
	rows := make([]tenantRow, len(tenants))
	for i, t := range tenants {
		rows[i] = tenantRow{Name: t.Name, Created: t.Created}
	}
	return rows, err
}

func (r *remote) removeTenant(ctx context.Context, name string, deleteData bool) (engine.Purged, error) {
	data := api.DataKeep
	if deleteData {
		data = api.DataDelete
	}
	removed, err := call(r, func(c *client.Client) (api.TenantRemoved, error) { return c.RemoveTenant(ctx, name, data) })
	purged := engine.Purged{Tables: removed.Tables}
	if removed.Items != nil {
		purged.Items = *removed.Items
	}
	return purged, err
}

func (r *remote) keys(ctx context.Context, name string) ([]keyRow, error) {
	return call(r, func(c *client.Client) ([]api.Key, error) { return c.Keys(ctx, name) })
}

func (r *remote) addKey(ctx context.Context, name, scope string) (keyRow, error) {
	return call(r, func(c *client.Client) (api.Key, error) { return c.AddKey(ctx, name, scope) })
}

func (r *remote) revoke(ctx context.Context, name, id string) (keyRow, error) {
	return call(r, func(c *client.Client) (api.Key, error) { return c.RevokeKey(ctx, name, id) })
}

func (r *remote) rotate(ctx context.Context, name, id string, grace time.Duration) (rotation, error) {
	return call(r, func(c *client.Client) (api.KeyRotated, error) { return c.RotateKey(ctx, name, id, grace) })
}

// The admin API: the physical tables and the lifecycle plan.

func (r *remote) tables(ctx context.Context) ([]engine.TableStatus, error) {
	return call(r, func(c *client.Client) ([]engine.TableStatus, error) { return c.PhysicalTables(ctx) })
}

func (r *remote) plan(ctx context.Context) ([]lifecycle.Report, error) {
	return call(r, func(c *client.Client) ([]lifecycle.Report, error) { return c.Plan(ctx) })
}

// The tenant's API: events and aggregates.

// writeEvents posts events to a logical table as NDJSON, in as many
// requests as the server's default limits on a body and its events ask.
// A request the server refuses for some of its events is a
// *event.BatchError indexed in events, as the engine's would be.
func (r *remote) writeEvents(ctx context.Context, table string, events event.Batch) (int, error) {
	c, err := r.api()
	if err != nil {
		return 0, err
	}
	written := 0
	var body []byte
	first := 0 // the index of body's first event
	send := func(next int) error {
		n, err := c.WriteBody(ctx, table, api.MediaNDJSON, body)
		var e *client.Error
		if errors.As(err, &e) && len(e.Body.Problems) > 0 {
			be := &event.BatchError{Problems: make([]event.Problem, len(e.Body.Problems))}
			for i, p := range e.Body.Problems {
				be.Problems[i] = event.Problem{Index: first + p.Index, Reason: p.Reason}
			}
			return be
		}
		if err != nil {
			return r.fail(err)
		}
		written += n
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

// events returns a page of a query's events.
func (r *remote) events(ctx context.Context, table string, q api.Query) (engine.Page, error) {
	answer, err := call(r, func(c *client.Client) (api.Page, error) { return c.Query(ctx, table, q) })
	if err != nil {
		return engine.Page{}, err
	}
	page := engine.Page{Events: make([]event.Event, len(answer.Events)), NextCursor: answer.NextCursor}
	for i, j := range answer.Events {
		e := event.Event{Time: j.Time.UTC(), Series: j.Series, ID: j.ID, Fields: j.Fields}
		if len(e.Fields) == 0 {
			e.Fields = nil
		}
		page.Events[i] = e
	}
	return page, nil
}

// aggregate returns an aggregate's buckets as one group without a key,
// or with GroupBy a page of its groups.
func (r *remote) aggregate(ctx context.Context, table string, q api.AggregateQuery) (engine.GroupPage, error) {
	answer, err := call(r, func(c *client.Client) (api.Aggregate, error) { return c.Aggregate(ctx, table, q) })
	if err != nil || q.GroupBy == "" {
		return engine.GroupPage{Groups: []engine.Group{{Buckets: answer.Buckets}}}, err
	}
	return engine.GroupPage{Groups: answer.Groups, Next: answer.NextGroup}, nil
}
