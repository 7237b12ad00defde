package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

const adminToken = "admin-s3cret"

// adminKey is an API key as the admin API answers it.
type adminKey struct {
	ID      string `json:"id"`
	Tenant  string `json:"tenant"`
	Scope   string `json:"scope"`
	Created string `json:"created"`
	Expires string `json:"expires"`
	State   string `json:"state"`
	Secret  string `json:"secret"`
}

func decode[T any](t *testing.T, res response) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(res.body, &v), "body: %s", res.body)
	return v
}

func TestAdminTenantsAndKeys(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken})
	admin := func(method, path, body string) response {
		t.Helper()
		return f.do(method, path, adminToken, []byte(body), "Content-Type", "application/json")
	}

	// Only the admin token opens the admin API.
	for _, key := range []string{"", f.acme, "admin-s3cre", adminToken + "x"} {
		res := f.do("GET", "/v1/admin/tenants", key, nil)
		require.Equal(t, http.StatusUnauthorized, res.status, "key %q: %s", key, res.body)
		require.Contains(t, res.header.Get("WWW-Authenticate"), "Bearer")
	}

	// Add a tenant; its key writes at once.
	res := admin("POST", "/v1/admin/tenants", `{"name": "beta"}`)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	added := decode[struct {
		Tenant struct{ Name string }
		Key    adminKey
	}](t, res)
	require.Equal(t, "beta", added.Tenant.Name)
	require.True(t, strings.HasPrefix(added.Key.Secret, "tt_"))
	require.Equal(t, "all", added.Key.Scope)
	require.Equal(t, "live", added.Key.State)
	first := added.Key
	res = f.postNDJSON(first.Secret, "cars", ndjson(now.Add(-time.Hour), "car-1", 3))
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)

	require.Equal(t, http.StatusConflict, admin("POST", "/v1/admin/tenants", `{"name": "beta"}`).status)
	require.Equal(t, http.StatusBadRequest, admin("POST", "/v1/admin/tenants", `{"name": "Beta!"}`).status)
	require.Equal(t, http.StatusBadRequest, admin("POST", "/v1/admin/tenants", `{"name": "gamma", "nme": 1}`).status)
	require.Equal(t, http.StatusBadRequest, admin("POST", "/v1/admin/tenants", `{"name":`).status)

	res = admin("GET", "/v1/admin/tenants", "")
	require.Equal(t, http.StatusOK, res.status)
	var names []string
	for _, tn := range decode[struct{ Tenants []struct{ Name string } }](t, res).Tenants {
		names = append(names, tn.Name)
	}
	require.Equal(t, []string{"acme", "beta", "globex"}, names)

	// A read-only key reads and may not write.
	res = admin("POST", "/v1/admin/tenants/beta/keys", `{"scope": "read"}`)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	reader := decode[adminKey](t, res)
	require.Equal(t, "read", reader.Scope)
	res = f.postNDJSON(reader.Secret, "cars", ndjson(now, "car-1", 1))
	require.Equal(t, http.StatusForbidden, res.status, "%s", res.body)
	require.Contains(t, string(res.body), "read-only")
	require.Len(t, f.all(reader.Secret, "cars", wide), 3)
	require.Equal(t, http.StatusBadRequest, admin("POST", "/v1/admin/tenants/beta/keys", `{"scope": "write"}`).status)
	require.Equal(t, http.StatusNotFound, admin("POST", "/v1/admin/tenants/nobody/keys", ``).status)

	res = admin("GET", "/v1/admin/tenants/beta/keys", "")
	require.Equal(t, http.StatusOK, res.status)
	keys := decode[struct{ Keys []adminKey }](t, res).Keys
	require.Len(t, keys, 2)
	require.Empty(t, keys[0].Secret, "a secret is shown once")
	require.NotContains(t, string(res.body), "tt_")

	// Rotation: both keys work for the grace, then only the new one.
	res = admin("POST", "/v1/admin/tenants/beta/keys/"+first.ID+"/rotate", `{"grace": "1h"}`)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	rot := decode[struct{ Key, Old adminKey }](t, res)
	require.Equal(t, "expiring", rot.Old.State)
	require.Equal(t, now.Add(time.Hour).Format(time.RFC3339Nano), rot.Old.Expires)
	require.Equal(t, "all", rot.Key.Scope)
	for _, k := range []string{first.Secret, rot.Key.Secret} {
		require.Equal(t, http.StatusOK, f.get(k, "cars", wide).status)
	}
	f.clock.Advance(time.Hour)
	require.Equal(t, http.StatusUnauthorized, f.get(first.Secret, "cars", wide).status)
	require.Equal(t, http.StatusOK, f.get(rot.Key.Secret, "cars", wide).status)
	require.Equal(t, http.StatusBadRequest, admin("POST", "/v1/admin/tenants/beta/keys/"+rot.Key.ID+"/rotate", `{"grace": "-1h"}`).status)

	// Revocation is at once.
	res = admin("DELETE", "/v1/admin/tenants/beta/keys/"+reader.ID, "")
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.Equal(t, "revoked", decode[adminKey](t, res).State)
	require.Equal(t, http.StatusUnauthorized, f.get(reader.Secret, "cars", wide).status)
	require.Equal(t, http.StatusNotFound, admin("DELETE", "/v1/admin/tenants/beta/keys/0000000000000000", "").status)

	// Removal revokes every key; the data stays, and nothing is removed
	// without saying so.
	require.Equal(t, http.StatusBadRequest, admin("DELETE", "/v1/admin/tenants/beta", "").status)
	require.Equal(t, http.StatusBadRequest, admin("DELETE", "/v1/admin/tenants/beta?data=maybe", "").status)
	res = admin("DELETE", "/v1/admin/tenants/beta?data=keep", "")
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.Equal(t, http.StatusUnauthorized, f.get(rot.Key.Secret, "cars", wide).status)
	require.Equal(t, http.StatusNotFound, admin("GET", "/v1/admin/tenants/beta/keys", "").status)
	require.Equal(t, http.StatusNotFound, admin("DELETE", "/v1/admin/tenants/beta?data=keep", "").status)
	res = f.postNDJSON(f.acme, "cars", ndjson(now, "car-1", 1))
	require.Equal(t, http.StatusOK, res.status, "other tenants are untouched: %s", res.body)

	// data=delete: the keys go, and every event with them; the name
	// added again starts empty.
	acmeEvents := len(f.all(f.acme, "cars", wide))
	res = admin("POST", "/v1/admin/tenants", `{"name": "gamma"}`)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	gamma := decode[struct{ Key adminKey }](t, res).Key.Secret
	require.Equal(t, http.StatusOK, f.postNDJSON(gamma, "cars", ndjson(now.Add(-time.Hour), "car-1", 30)).status)
	res = admin("DELETE", "/v1/admin/tenants/gamma?data=delete", "")
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	gone := decode[struct {
		Data   string
		Tables []string
		Items  int64
	}](t, res)
	require.Equal(t, "deleted", gone.Data)
	require.Equal(t, []string{"cars"}, gone.Tables)
	events := int64(30) // an item per event, a row each
	if f.db.Options().Schema.Families[0].Layout == family.LayoutChunk {
		events = 1 // one request's events of a series and hour: a chunk
	}
	require.GreaterOrEqual(t, gone.Items, events+1, "the events' items and a series index entry")
	require.Equal(t, http.StatusUnauthorized, f.get(gamma, "cars", wide).status)
	require.Equal(t, http.StatusNotFound, admin("DELETE", "/v1/admin/tenants/gamma?data=delete", "").status, "nothing left")
	res = admin("POST", "/v1/admin/tenants", `{"name": "gamma"}`)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	again := decode[struct{ Key adminKey }](t, res).Key.Secret
	res = f.do("GET", "/v1/tables", again, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.JSONEq(t, `{"tables": []}`, string(res.body))
	require.Equal(t, http.StatusNotFound, f.get(again, "cars", wide).status)
	require.Len(t, f.all(f.acme, "cars", wide), acmeEvents, "acme's events stay")
}

func TestAdminTablesAndLifecycle(t *testing.T) {
	store, cfg := backend.Open(t)
	reg := prometheus.NewRegistry()
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: store, Families: cfg.Families, MetaTable: cfg.MetaTable, Clock: clock.NewManual(now), Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	f := newFixtureOn(t, store, cfg, reg, server.Options{AdminToken: adminToken, Lifecycle: r, StoreKind: backend.Name})

	res := f.do("GET", "/v1/admin/lifecycle", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.JSONEq(t, `{"last_cycle": null}`, string(res.body))

	res = f.do("GET", "/v1/admin/plan", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	plan := decode[struct{ Actions []lifecycle.Report }](t, res).Actions
	require.NotEmpty(t, plan)
	for _, a := range plan {
		require.Equal(t, "dry-run", a.Result)
	}

	_, err = r.Reconcile(context.Background(), false)
	require.NoError(t, err)
	res = f.do("GET", "/v1/admin/lifecycle", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	last := decode[struct {
		LastCycle lifecycle.CycleReport `json:"last_cycle"`
	}](t, res).LastCycle
	require.Equal(t, lifecycle.CycleOK, last.Outcome)
	require.Len(t, last.Actions, len(plan))
	require.Equal(t, "done", last.Actions[0].Result)

	require.Equal(t, http.StatusOK, f.postNDJSON(f.acme, "cars", ndjson(now.Add(-time.Hour), "car-1", 2)).status)
	res = f.do("GET", "/v1/admin/tables", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	tables := decode[struct{ Tables []engine.TableStatus }](t, res).Tables
	require.Len(t, tables, 1)
	require.Equal(t, "active", tables[0].State)
	require.Equal(t, "events", tables[0].Family)
	require.Equal(t, "hot", tables[0].Tier)
	require.Equal(t, 2, tables[0].IDScheme, "a table made now has id scheme 2")
	require.Contains(t, string(res.body), `"id_scheme":2`)
	require.Equal(t, backend.Name, decode[struct{ Store string }](t, res).Store, "the store's kind, for the console")
	require.Equal(t, tables[0].Name, tables[0].Physical, "never rewritten: the table of its name")

	// Rewritten into its next physical table (compact.NextGeneration):
	// listed under its name, with the table that holds its events.
	ctx := context.Background()
	entries := registry.New(store, backends.MetaTable(cfg))
	es, err := entries.List(ctx, "events")
	require.NoError(t, err)
	require.Len(t, es, 1)
	e, err := entries.Save(ctx, compact.AsChunks(es[0], time.Hour))
	require.NoError(t, err)
	_, _, err = compact.Entry(ctx, store, entries, e, now, compact.Options{Method: compact.NextGeneration})
	require.NoError(t, err)
	res = f.do("GET", "/v1/admin/tables", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	tables = decode[struct{ Tables []engine.TableStatus }](t, res).Tables
	require.Len(t, tables, 1)
	require.Equal(t, e.Name, tables[0].Name)
	require.Equal(t, e.Name+".r1", tables[0].Physical)
	require.Contains(t, string(res.body), `"physical":"`+e.Name+`.r1"`)
	require.Equal(t, "ACTIVE", tables[0].Status, "the store's description of the rewritten table")
}

// TestAdminAPIOff checks that without an admin token there is no admin
// API, and the 404 says how to turn it on.
func TestAdminAPIOff(t *testing.T) {
	f := newFixture(t, server.Options{})
	res := f.do("GET", "/v1/admin/tenants", f.acme, nil)
	require.Equal(t, http.StatusNotFound, res.status)
	require.Contains(t, string(res.body), "TIMETABLE_ADMIN_TOKEN")
	require.NotContains(t, string(res.body), "GET /v1/admin/tenants", "the routes listed are those served")
	f = newFixture(t, server.Options{AdminToken: adminToken})
	res = f.do("GET", "/v1/admin/lifecycle", adminToken, nil)
	require.Equal(t, http.StatusNotFound, res.status, "no lifecycle manager runs")
	require.Contains(t, string(res.body), "--reconcile-interval")
}

// TestNotFoundListsEveryRoute checks that the 404 names every route the
// server serves, from the one list of routes.
func TestNotFoundListsEveryRoute(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken})
	res := f.do("GET", "/v2/nothing", "", nil)
	require.Equal(t, http.StatusNotFound, res.status)
	for _, r := range server.Routes() {
		require.Contains(t, string(res.body), r.Method+" "+r.Pattern)
	}
	res = f.do("PUT", "/v1/admin/tenants", adminToken, nil)
	require.Equal(t, http.StatusMethodNotAllowed, res.status)
	require.Equal(t, "GET, HEAD, POST", res.header.Get("Allow"))
}

// TestRevocationAcrossServers checks that a key revoked through one
// server is refused by it at once and by another on the same store once
// the other's key cache has let the key go (tenant.DefaultKeyTTL), and
// that a key added through one works on the other at once.
func TestRevocationAcrossServers(t *testing.T) {
	store, cfg := backend.Open(t)
	a := newFixtureOn(t, store, cfg, prometheus.NewRegistry(), server.Options{AdminToken: adminToken})
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: a.clock})
	require.NoError(t, err)
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	h, err := server.New(db, server.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); db.Close() })
	b := *a
	b.url = srv.URL

	res := a.do("POST", "/v1/admin/tenants/acme/keys", adminToken, nil)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	k := decode[adminKey](t, res)
	for i := range 3 {
		require.Equal(t, http.StatusOK, b.postNDJSON(k.Secret, "cars", ndjson(now.Add(-time.Hour), fmt.Sprint("s", i), 1)).status)
	}
	require.Equal(t, http.StatusOK, a.do("DELETE", "/v1/admin/tenants/acme/keys/"+k.ID, adminToken, nil).status)
	res = a.get(k.Secret, "cars", wide)
	require.Equal(t, http.StatusUnauthorized, res.status, "refused at once where revoked: %s", res.body)
	require.Equal(t, http.StatusOK, b.get(k.Secret, "cars", wide).status, "the other server trusts its cache for the TTL")
	a.clock.Advance(tenant.DefaultKeyTTL)
	res = b.get(k.Secret, "cars", wide)
	require.Equal(t, http.StatusUnauthorized, res.status, "and refuses the key after it: %s", res.body)
	require.Equal(t, http.StatusOK, b.get(a.acme, "cars", wide).status, "the tenant's other key works")
}

func TestAdminPlanner(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken})
	res := f.do("GET", "/v1/admin/planner?rate=5000&peak=6000&item_bytes=180&retention=30d", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	got := decode[struct {
		Report struct {
			Period string
			Shards int
		}
		SVG string
	}](t, res)
	require.Equal(t, 6, got.Report.Shards, "the AWS guide's 6,000 events a second peak needs six shards")
	require.Contains(t, got.SVG, "<svg")
	for q, says := range map[string]string{
		"rate=-1":                  "rate",
		"rate=fast":                "rate",
		"rate=1&retention=forever": "retention",
		"rate=1&size=3":            "unknown parameter",
		"rate=1&peak=0.5":          "",
	} {
		res := f.do("GET", "/v1/admin/planner?"+q, adminToken, nil)
		require.Equal(t, http.StatusBadRequest, res.status, "%s: %s", q, res.body)
		require.Contains(t, string(res.body), says)
	}
	require.Equal(t, http.StatusUnauthorized, f.do("GET", "/v1/admin/planner?rate=1", f.acme, nil).status)
}
