package api

import (
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Tenant is a tenant as the admin API answers it.
type Tenant struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Limits are the tenant's limits and usage, in the answer of GET
	// /v1/admin/tenants.
	Limits *Limits `json:"limits,omitempty"`
}

// Tenants is the answer of GET /v1/admin/tenants.
type Tenants struct {
	Tenants []Tenant `json:"tenants"`
}

// Key is an API key as the admin API answers it.
type Key struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	// Scope is all (read and write) or read.
	Scope   string    `json:"scope"`
	Created time.Time `json:"created"`
	// Expires is when a rotated key stops working, absent for a key
	// without an end.
	Expires time.Time `json:"expires,omitzero"`
	// State is live, expiring (rotated out, in its grace) or revoked.
	State string `json:"state"`
	// Secret is the key itself, only in the answer that made it.
	Secret string `json:"secret,omitempty"`
}

// Keys is the answer of GET /v1/admin/tenants/{tenant}/keys.
type Keys struct {
	Keys []Key `json:"keys"`
}

// Scopes of a key.
const (
	ScopeAll  = "all"
	ScopeRead = "read"
)

// AddTenant is the body of POST /v1/admin/tenants.
type AddTenant struct {
	Name string `json:"name"`
}

// TenantAdded is the answer of POST /v1/admin/tenants (201): the tenant
// and its first key, secret included.
type TenantAdded struct {
	Key    Key    `json:"key"`
	Tenant Tenant `json:"tenant"`
}

// What becomes of a removed tenant's events: the data parameter of
// DELETE /v1/admin/tenants/{tenant}, required.
const (
	// DataKeep leaves them in the store.
	DataKeep = "keep"
	// DataDelete deletes them, once no key can write more.
	DataDelete = "delete"
)

// RemoveTenantValues returns the parameters of DELETE
// /v1/admin/tenants/{tenant}: data, DataKeep or DataDelete.
func RemoveTenantValues(data string) url.Values {
	return url.Values{"data": {data}}
}

// TenantRemoved is the answer of DELETE /v1/admin/tenants/{tenant}.
type TenantRemoved struct {
	// Data is "kept" or "deleted".
	Data string `json:"data"`
	// Items is the number of items deleted; absent when the data was
	// kept.
	Items *int64 `json:"items,omitempty"`
	// Removed is the tenant's name.
	Removed string `json:"removed"`
	// Tables are the physical tables data were deleted from ([] for
	// none); absent when the data was kept.
	Tables []string `json:"tables,omitzero"`
}

// AddKey is the body of POST /v1/admin/tenants/{tenant}/keys.
type AddKey struct {
	// Scope is ScopeAll or ScopeRead; left out, ScopeAll. An empty
	// string is refused (400), never taken for all.
	Scope string `json:"scope,omitempty"`
}

// The answer of POST /v1/admin/tenants/{tenant}/keys (201) is the Key,
// secret included; of DELETE /v1/admin/tenants/{tenant}/keys/{id} the
// revoked Key.

// RotateKey is the body of POST
// /v1/admin/tenants/{tenant}/keys/{id}/rotate.
type RotateKey struct {
	// Grace is how long the old key keeps working, a Go duration ("24h");
	// "" revokes it at once.
	Grace string `json:"grace,omitempty"`
}

// KeyRotated is the answer of POST
// /v1/admin/tenants/{tenant}/keys/{id}/rotate (201): the new key, secret
// included, and the old one with its end.
type KeyRotated struct {
	Key Key `json:"key"`
	Old Key `json:"old"`
}

// PlannerQuery is a request of GET /v1/admin/planner: a workload, as
// Values writes it.
type PlannerQuery struct {
	// Rate is events a second, Peak the peak rate (0: Rate).
	Rate, Peak float64
	// ItemBytes is the stored size of one event (0: the server's 180,
	// the AWS guide's).
	ItemBytes int
	// Retention is how long data is kept, a duration ("90d"); "" or "0"
	// keeps it forever.
	Retention string
	// Series is the number of series, 0 for unknown.
	Series int
}

// Values returns the query's parameters.
func (q PlannerQuery) Values() url.Values {
	p := url.Values{}
	number := func(name string, v float64) {
		if v != 0 {
			p.Set(name, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	number("rate", q.Rate)
	number("peak", q.Peak)
	number("item_bytes", float64(q.ItemBytes))
	number("series", float64(q.Series))
	set(p, "retention", q.Retention)
	return p
}

// Planner is the answer of GET /v1/admin/planner.
type Planner struct {
	// Report is the capacity planner's report, as `timetable plan
	// --format json` prints it: a planner.Report.
	Report json.RawMessage `json:"report"`
	// SVG is its cost chart, an SVG document.
	SVG string `json:"svg"`
}
