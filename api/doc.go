// Package api is the wire contract of timetable's HTTP API: the paths of
// its endpoints, the request and answer bodies they take and give, the
// query parameters of its reads, and the error body and codes of every
// failure. The server (package server) writes these types, the Go client
// (package client) reads them, and both import this package, which
// imports only the standard library and one rule of its own module
// (jsonnum, what a JSON number literal is), so any Go program can speak the API
// without the engine.
//
// # Endpoints
//
// Every /v1 route but the admin ones takes a tenant's API key as
// "Authorization: Bearer <key>"; the admin routes, under /v1/admin/,
// take the admin token the same way and are served only when the server
// has one. Every answer is JSON of the type after the arrow, every
// error an ErrorBody.
//
//	POST   /v1/tables/{table}/events    []Event as MediaJSON, or MediaNDJSON  → Written
//	GET    /v1/tables/{table}/events    Query.Values                          → Page, paged by NextCursor
//	GET    /v1/tables/{table}/aggregate AggregateQuery.Values                 → Aggregate, groups paged by NextGroup
//	GET    /v1/tables                                                         → LogicalTables
//	GET    /v1/tables/{table}/series    SeriesQuery.Values                    → SeriesPage, paged by NextCursor
//	GET    /healthz                                                           → Health
//	GET    /readyz                                                            → Health, 503 when not ready
//	POST   /write, /api/v2/write        InfluxDB line protocol                → 204, no body
//	GET    /ping                                                              → 204, or InfluxPing with verbose=true
//	GET, POST /query                    InfluxQL: ?q=&db=&epoch=&chunked=     → InfluxQLResponse (docs/influxql.md)
//	GET    /v1/admin/tenants                                                  → Tenants
//	POST   /v1/admin/tenants            AddTenant                             → TenantAdded (201)
//	DELETE /v1/admin/tenants/{tenant}   RemoveTenantValues                    → TenantRemoved
//	GET    /v1/admin/tenants/{tenant}/keys                                    → Keys
//	POST   /v1/admin/tenants/{tenant}/keys AddKey                             → Key (201), secret included
//	DELETE /v1/admin/tenants/{tenant}/keys/{id}                               → Key, revoked
//	POST   /v1/admin/tenants/{tenant}/keys/{id}/rotate RotateKey              → KeyRotated (201)
//	GET    /v1/admin/tables                                                   → PhysicalTables
//	GET    /v1/admin/lifecycle                                                → LastCycle
//	GET    /v1/admin/plan                                                     → Plan
//	GET    /v1/admin/planner            PlannerQuery.Values                   → Planner
//	GET    /v1/admin/debug/cpu          ?seconds=                             → a pprof profile, not JSON
//
// The Path… constants are these patterns, as net/http's ServeMux reads
// them; package server's route table is built from them. `timetable
// serve --help` lists the routes with a line on each, and package
// server's documentation says what each does.
//
// # Errors
//
// An answer that is not 2xx carries an ErrorBody: the server's words in
// "error", the refused events of a write in "problems" (400), the
// refused lines of a line protocol write in "lines", and what a write
// that failed part-way stored in "written" and "unwritten". Its status
// says what to do: 400 (a bad request, refused again if sent again), 401
// with WWW-Authenticate (no credential, or one refused), 403 (a read-only
// key on a route that writes, a browser origin the server does not
// allow), 404 (no such route, table, tenant or key), 405 with Allow, 408
// (a body too slow), 409 (a tenant that exists, a CPU profile already
// running, an archived period whose archive does not match its
// manifest, until an operator repairs it), 413 (over the limits),
// 415 (a Content-Type or Content-Encoding the server does not read), 503
// with RetryAfter (the same request may succeed after the wait), 500
// (anything else; the request may be retried whole). CodeOf names the
// class of each status, as InfluxDB 2.x does; its write endpoint also
// writes the code in the body.
//
// # Encoding
//
// The JSON is the server's, byte for byte: the types' field order and
// MarshalJSON methods write what the server writes, and a test marshals
// each from what the server answers. Times are RFC 3339 in UTC, with as
// many fractional digits as they need (a physical table's in whole
// seconds); numbers among event fields and aggregate results are exact
// decimals, which a reader should decode as json.Number
// (json.Decoder.UseNumber), as package client does.
//
// # Types the engine returns
//
// Decision: where the engine's own answer was already the wire form,
// that type is defined here and the engine (or the lifecycle manager)
// names it with an alias, so that the server writes it with no
// conversion: Bucket (engine.Bucket, which the aggregate path writes with
// Bucket.AppendJSON, without reflection), TableStatus
// (engine.TableStatus), ActionReport and CycleReport (lifecycle.Report and
// lifecycle.CycleReport). Where the engine's type is not the wire form
// (tenants, keys, logical tables, groups) the server converts, once per
// item listed. Events are the exception that is neither: the query path
// (engine.DB.QueryJSON) writes each event's JSON straight from the store's
// item, and Event is only the shape of that JSON, for readers and writers
// outside the server; no event is ever converted to it on the server.
package api

// Paths of the API's endpoints, as patterns of net/http's ServeMux.
const (
	PathEvents    = "/v1/tables/{table}/events"
	PathAggregate = "/v1/tables/{table}/aggregate"
	PathTables    = "/v1/tables"
	PathSeries    = "/v1/tables/{table}/series"
	PathHealthz   = "/healthz"
	PathReadyz    = "/readyz"
	PathMetrics   = "/metrics"

	PathInfluxWrite   = "/write"
	PathInfluxV2Write = "/api/v2/write"
	PathInfluxPing    = "/ping"
	PathInfluxQuery   = "/query"

	// PathAdmin starts every admin path.
	PathAdmin          = "/v1/admin/"
	PathTenants        = PathAdmin + "tenants"
	PathTenant         = PathAdmin + "tenants/{tenant}"
	PathTenantLimits   = PathAdmin + "tenants/{tenant}/limits"
	PathKeys           = PathAdmin + "tenants/{tenant}/keys"
	PathKey            = PathAdmin + "tenants/{tenant}/keys/{id}"
	PathRotateKey      = PathAdmin + "tenants/{tenant}/keys/{id}/rotate"
	PathPhysicalTables = PathAdmin + "tables"
	PathLifecycle      = PathAdmin + "lifecycle"
	PathPlan           = PathAdmin + "plan"
	PathPlanner        = PathAdmin + "planner"
	PathCPUProfile     = PathAdmin + "debug/cpu"
)
