package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/tenant"
)

// The admin API, under /v1/admin/, manages tenants and their API keys and
// shows the physical tables and the lifecycle manager. It is served only
// when Options.AdminToken is set, to requests that carry that token as
// "Authorization: Bearer <token>"; a tenant's API key is not an admin
// token. Answers are JSON; a key's secret is in the answer that makes the
// key and in no other.

// Lifecycle is what the admin API asks of the lifecycle manager running
// beside the server; *lifecycle.Reconciler is one.
type Lifecycle interface {
	// LastCycle returns the last cycle, and false before the first.
	LastCycle() (lifecycle.Cycle, bool)
	// DryRun plans a cycle at the current time without acting.
	DryRun(ctx context.Context) ([]lifecycle.Result, error)
}

// maxAdminBody bounds the body of an admin request: a few short fields.
const maxAdminBody = 64 << 10

// adminEndpoint is the body of an admin handler.
type adminEndpoint func(w http.ResponseWriter, r *http.Request) error

// admin runs an endpoint for a request that carries the admin token, and
// answers 401 otherwise.
func (s *Server) admin(ep adminEndpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := credential(r, "admin token")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		sum := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(sum[:], s.adminHash[:]) != 1 {
			s.fail(w, r, fmt.Errorf("%w: not the admin token", errBadAdminToken))
			return
		}
		if info := infoOf(r); info != nil {
			info.tenant = "(admin)"
		}
		if err := ep(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// errBadAdminToken is a bearer token on an admin route that is not the
// admin token: 401.
var errBadAdminToken = errors.New("timetable: bad admin token")

// readBody decodes a request's JSON body into v, refusing unknown fields,
// and what the event API refuses too (checkAdminJSON): a key twice, and
// anything after the value; an empty body leaves v as it is.
func readBody(r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAdminBody))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(b) == 0 {
		return nil
	}
	if err := checkAdminJSON(b); err != nil {
		return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: body: %v", err)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: body: %v", err)}
	}
	return nil
}

// keyOf returns a key as the admin API answers it, without its secret.
func keyOf(k tenant.Key, now time.Time) api.Key {
	return api.Key{ID: k.ID, Tenant: k.Tenant, Scope: string(k.Scope), Created: k.Created.UTC(), Expires: k.Expires.UTC(), State: string(k.State(now))}
}

func (s *Server) now() time.Time { return s.db.Options().Clock.Now() }

// listTenants answers GET /v1/admin/tenants.
func (s *Server) listTenants(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	ts, err := s.opts.TenantDirectory.List(r.Context())
	if err != nil {
		return err
	}
	out := api.Tenants{Tenants: make([]api.Tenant, len(ts))}
	for i, t := range ts {
		out.Tenants[i] = api.Tenant{Name: t.Name, Created: t.Created.UTC()}
		overrides, err := s.opts.TenantDirectory.Limits(r.Context(), t.Name)
		if err != nil {
			return err
		}
		l := s.limitsAnswer(r.Context(), t.Name, overrides)
		out.Tenants[i].Limits = &l
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// addTenant answers POST /v1/admin/tenants {"name": ...}: 201 with the
// tenant and its first key, secret included.
func (s *Server) addTenant(w http.ResponseWriter, r *http.Request) error {
	var req api.AddTenant
	if err := readBody(r, &req); err != nil {
		return err
	}
	now := s.now()
	k, secret, err := s.opts.TenantDirectory.AddTenant(r.Context(), req.Name, now)
	if err != nil {
		return err
	}
	key := keyOf(k, now)
	key.Secret = secret
	writeJSON(w, http.StatusCreated, api.TenantAdded{Key: key, Tenant: api.Tenant{Name: req.Name, Created: now.UTC()}})
	return nil
}

// removeTenant answers DELETE /v1/admin/tenants/{tenant}?data=keep|delete:
// the tenant's keys are revoked and it is removed; its events stay, or
// are deleted (engine.DeleteTenantData) once no key can write more. A
// deletion that fails part-way is finished by sending the request again:
// a removed tenant's remaining data is deleted then, and the answer is
// 404 only when neither the tenant nor any of its data is left.
func (s *Server) removeTenant(w http.ResponseWriter, r *http.Request) error {
	params := r.URL.Query()
	if err := checkParams(params, "data"); err != nil {
		return err
	}
	data := params.Get("data")
	switch data {
	case api.DataKeep, api.DataDelete:
	default:
		return fmt.Errorf("%w: data: say what becomes of the tenant's events: data=keep leaves them in the store, data=delete deletes them", ErrBadParameter)
	}
	name := r.PathValue("tenant")
	err := s.opts.TenantDirectory.Remove(r.Context(), name, s.now())
	if data == api.DataKeep || (err != nil && !errors.Is(err, tenant.ErrNotFound)) {
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, api.TenantRemoved{Removed: name, Data: "kept"})
		return nil
	}
	removed := err == nil
	if !removed {
		// Removed before: finish a deletion that stopped part-way.
		tables, lerr := s.db.LogicalTables(r.Context(), name)
		if lerr != nil {
			return lerr
		}
		if len(tables) == 0 {
			return err
		}
	}
	purged, err := s.db.DeleteTenantData(r.Context(), name)
	if err != nil {
		return fmt.Errorf("tenant %q removed, its keys revoked; deleting its data stopped after %d items (send the request again to finish): %w", name, purged.Items, err)
	}
	if purged.Tables == nil {
		purged.Tables = []string{}
	}
	writeJSON(w, http.StatusOK, api.TenantRemoved{Removed: name, Data: "deleted", Tables: purged.Tables, Items: &purged.Items})
	return nil
}

// listKeys answers GET /v1/admin/tenants/{tenant}/keys.
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	name := r.PathValue("tenant")
	if _, err := s.opts.TenantDirectory.Get(r.Context(), name); err != nil {
		return err
	}
	keys, err := s.opts.TenantDirectory.Keys(r.Context(), name)
	if err != nil {
		return err
	}
	now := s.now()
	out := api.Keys{Keys: make([]api.Key, len(keys))}
	for i, k := range keys {
		out.Keys[i] = keyOf(k, now)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// addKey answers POST /v1/admin/tenants/{tenant}/keys {"scope": ...}:
// 201 with the key, secret included.
func (s *Server) addKey(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		// Scope is api.AddKey's, nil when the body leaves it out: an
		// empty scope is a mistake, not the default.
		Scope *string `json:"scope"`
	}
	if err := readBody(r, &req); err != nil {
		return err
	}
	given := string(tenant.ScopeAll)
	if req.Scope != nil {
		if given = *req.Scope; given == "" {
			return fmt.Errorf("%w \"\": use all or read, or leave scope out for all", tenant.ErrBadScope)
		}
	}
	scope, err := tenant.ParseScope(given)
	if err != nil {
		return err
	}
	now := s.now()
	k, secret, err := s.opts.TenantDirectory.AddKey(r.Context(), r.PathValue("tenant"), scope, now)
	if err != nil {
		return err
	}
	key := keyOf(k, now)
	key.Secret = secret
	writeJSON(w, http.StatusCreated, key)
	return nil
}

// revokeKey answers DELETE /v1/admin/tenants/{tenant}/keys/{id}.
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	now := s.now()
	k, err := s.opts.TenantDirectory.Revoke(r.Context(), r.PathValue("tenant"), r.PathValue("id"), now)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, keyOf(k, now))
	return nil
}

// rotateKey answers POST /v1/admin/tenants/{tenant}/keys/{id}/rotate
// {"grace": "24h"}: 201 with the new key, secret included, and the old
// one with its end.
func (s *Server) rotateKey(w http.ResponseWriter, r *http.Request) error {
	var req api.RotateKey
	if err := readBody(r, &req); err != nil {
		return err
	}
	var grace time.Duration
	if req.Grace != "" {
		var err error
		if grace, err = time.ParseDuration(req.Grace); err != nil || grace <= 0 {
			return fmt.Errorf("%w: grace %q: use a positive Go duration such as 1h or 30m", tenant.ErrBadGrace, req.Grace)
		}
	}
	now := s.now()
	rot, err := s.opts.TenantDirectory.Rotate(r.Context(), r.PathValue("tenant"), r.PathValue("id"), grace, now)
	if err != nil {
		return err
	}
	key := keyOf(rot.New, now)
	key.Secret = rot.Secret
	writeJSON(w, http.StatusCreated, api.KeyRotated{Key: key, Old: keyOf(rot.Old, now)})
	return nil
}

// listPhysicalTables answers GET /v1/admin/tables: the registry's
// tables with what the store says of each (engine.DB.Tables), and the
// store's kind (Options.StoreKind).
func (s *Server) listPhysicalTables(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	tables, err := s.db.Tables(r.Context())
	if err != nil {
		return err
	}
	if tables == nil {
		tables = []api.TableStatus{}
	}
	writeJSON(w, http.StatusOK, api.PhysicalTables{Store: s.opts.StoreKind, Tables: tables})
	return nil
}

// errNoLifecycle answers the lifecycle routes of a server without a
// lifecycle manager.
var errNoLifecycle = &httpError{status: http.StatusNotFound, msg: "timetable: no lifecycle manager runs in this server (serve --reconcile-interval 0)"}

// lastCycle answers GET /v1/admin/lifecycle: the last cycle, or null
// before the first.
func (s *Server) lastCycle(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	if s.opts.Lifecycle == nil {
		return errNoLifecycle
	}
	c, ok := s.opts.Lifecycle.LastCycle()
	var last api.LastCycle
	if ok {
		rep := c.Report()
		last.LastCycle = &rep
	}
	writeJSON(w, http.StatusOK, last)
	return nil
}

// plan answers GET /v1/admin/plan: every action a cycle would take now,
// with its reason, changing nothing.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	if s.opts.Lifecycle == nil {
		return errNoLifecycle
	}
	results, err := s.opts.Lifecycle.DryRun(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.Plan{Actions: lifecycle.Reports(results)})
	return nil
}

// tenantLimits answers GET /v1/admin/tenants/{tenant}/limits: the
// tenant's overrides, the limits in force and its usage of this server.
func (s *Server) tenantLimits(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	name := r.PathValue("tenant")
	overrides, err := s.opts.TenantDirectory.Limits(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.limitsAnswer(r.Context(), name, overrides))
	return nil
}

// setTenantLimits answers PUT /v1/admin/tenants/{tenant}/limits: the
// body replaces the tenant's overrides (an empty object, or absent
// fields, go back to the defaults). Every server on the store applies
// them within admission.TenantsOptions.Refresh; this one at once.
func (s *Server) setTenantLimits(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	var req api.TenantLimits
	if err := readBody(r, &req); err != nil {
		return err
	}
	name := r.PathValue("tenant")
	if err := s.opts.TenantDirectory.SetLimits(r.Context(), name, tenant.Limits(req)); err != nil {
		return err
	}
	s.tenants.Forget(name)
	writeJSON(w, http.StatusOK, s.limitsAnswer(r.Context(), name, tenant.Limits(req)))
	return nil
}

// limitsAnswer is a tenant's limits and usage as the admin API answers
// them.
func (s *Server) limitsAnswer(ctx context.Context, name string, overrides tenant.Limits) api.Limits {
	_, body := s.bodies.Used(name)
	_, events := s.events.Used(name)
	partitions, _ := s.db.QueryPartitions(name)
	return api.Limits{
		Overrides: api.TenantLimits(overrides),
		Effective: api.TenantLimits(s.tenants.Limits(ctx, name)),
		Usage: api.TenantUsage{
			BodyBytes: body, BodyBytesShare: s.bodies.Share(),
			EventBytes: events, EventBytesShare: s.events.Share(),
			Queries:         s.tenants.Queries(name),
			QueryPartitions: partitions, QueryPartitionsShare: s.queryPartitionsShare(ctx, name),
			Writes: s.tenants.Writes(name),
		},
		MetricsLabel: s.tenantLabel(name),
	}
}
