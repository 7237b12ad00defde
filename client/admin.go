package client

import (
	"context"
	"net/http"
	"time"

	"github.com/timetabledb/timetable/api"
)

// The admin API: these take the admin token.

// Tenants returns every tenant.
func (c *Client) Tenants(ctx context.Context) ([]api.Tenant, error) {
	var answer api.Tenants
	err := c.do(ctx, http.MethodGet, api.PathTenants, nil, "", nil, &answer)
	return answer.Tenants, err
}

// AddTenant adds a tenant and returns it with its first API key, whose
// Secret is shown here and never again.
func (c *Client) AddTenant(ctx context.Context, name string) (api.TenantAdded, error) {
	var answer api.TenantAdded
	body, err := marshal(api.AddTenant{Name: name})
	if err != nil {
		return answer, err
	}
	err = c.do(ctx, http.MethodPost, api.PathTenants, nil, api.MediaJSON, body, &answer)
	return answer, err
}

// RemoveTenant revokes a tenant's keys and removes it; data says what
// becomes of its events, api.DataKeep or api.DataDelete. A deletion that
// stopped part-way is finished by calling again.
func (c *Client) RemoveTenant(ctx context.Context, name, data string) (api.TenantRemoved, error) {
	var answer api.TenantRemoved
	err := c.do(ctx, http.MethodDelete, path(api.PathTenant, name), api.RemoveTenantValues(data), "", nil, &answer)
	return answer, err
}

// TenantLimits returns a tenant's limits: the overrides set for it, the
// limits in force, and its usage of the server answering.
func (c *Client) TenantLimits(ctx context.Context, tenant string) (api.Limits, error) {
	var answer api.Limits
	err := c.do(ctx, http.MethodGet, path(api.PathTenantLimits, tenant), nil, "", nil, &answer)
	return answer, err
}

// SetTenantLimits replaces a tenant's overrides with l (zero fields: the
// server's defaults) and returns its limits as TenantLimits does.
func (c *Client) SetTenantLimits(ctx context.Context, tenant string, l api.TenantLimits) (api.Limits, error) {
	var answer api.Limits
	body, err := marshal(l)
	if err != nil {
		return answer, err
	}
	err = c.do(ctx, http.MethodPut, path(api.PathTenantLimits, tenant), nil, api.MediaJSON, body, &answer)
	return answer, err
}

// Keys returns a tenant's API keys, without their secrets.
func (c *Client) Keys(ctx context.Context, tenant string) ([]api.Key, error) {
	var answer api.Keys
	err := c.do(ctx, http.MethodGet, path(api.PathKeys, tenant), nil, "", nil, &answer)
	return answer.Keys, err
}

// AddKey adds an API key of scope (api.ScopeAll or api.ScopeRead) to a
// tenant and returns it, its Secret shown here and never again.
func (c *Client) AddKey(ctx context.Context, tenant, scope string) (api.Key, error) {
	var key api.Key
	body, err := marshal(api.AddKey{Scope: scope})
	if err != nil {
		return key, err
	}
	err = c.do(ctx, http.MethodPost, path(api.PathKeys, tenant), nil, api.MediaJSON, body, &key)
	return key, err
}

// RevokeKey revokes an API key at once and returns it.
func (c *Client) RevokeKey(ctx context.Context, tenant, id string) (api.Key, error) {
	var key api.Key
	err := c.do(ctx, http.MethodDelete, path(api.PathKey, tenant, id), nil, "", nil, &key)
	return key, err
}

// RotateKey adds a key of the same scope as the key id, and revokes that
// one after grace (at once for 0).
func (c *Client) RotateKey(ctx context.Context, tenant, id string, grace time.Duration) (api.KeyRotated, error) {
	var answer api.KeyRotated
	req := api.RotateKey{}
	if grace > 0 {
		req.Grace = grace.String()
	}
	body, err := marshal(req)
	if err != nil {
		return answer, err
	}
	err = c.do(ctx, http.MethodPost, path(api.PathRotateKey, tenant, id), nil, api.MediaJSON, body, &answer)
	return answer, err
}

// PhysicalTables returns the registry's physical tables with what the
// store says of each.
func (c *Client) PhysicalTables(ctx context.Context) ([]api.TableStatus, error) {
	var answer api.PhysicalTables
	err := c.do(ctx, http.MethodGet, api.PathPhysicalTables, nil, "", nil, &answer)
	return answer.Tables, err
}

// LastCycle returns the lifecycle manager's last cycle, nil before the
// first.
func (c *Client) LastCycle(ctx context.Context) (*api.CycleReport, error) {
	var answer api.LastCycle
	err := c.do(ctx, http.MethodGet, api.PathLifecycle, nil, "", nil, &answer)
	return answer.LastCycle, err
}

// Plan returns every action a lifecycle cycle would take now, changing
// nothing.
func (c *Client) Plan(ctx context.Context) ([]api.ActionReport, error) {
	var answer api.Plan
	err := c.do(ctx, http.MethodGet, api.PathPlan, nil, "", nil, &answer)
	return answer.Actions, err
}

// Planner returns the capacity planner's report and cost chart for a
// workload.
func (c *Client) Planner(ctx context.Context, q api.PlannerQuery) (api.Planner, error) {
	var answer api.Planner
	err := c.do(ctx, http.MethodGet, api.PathPlanner, q.Values(), "", nil, &answer)
	return answer, err
}
