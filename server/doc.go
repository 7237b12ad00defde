// Package server is timetable's HTTP API v1: the ingest and query
// endpoints of docs/api.md over an engine.DB, with authentication by API key,
// request limits, Prometheus metrics, structured request logs and a
// graceful shutdown.
//
// # Endpoints
//
// The paths, request and answer bodies and error body are package api's,
// the wire contract the Go client (package client) reads too.
//
// Routes (routes.go) is the one list of them, which builds the
// multiplexer, the 404 answer's list and `timetable serve --help`: events
// written and read, aggregates, a tenant's logical tables and series,
// /healthz, /readyz, /metrics, InfluxDB's line protocol writes (/write,
// /api/v2/write and /ping: see InfluxDB below), InfluxQL on /query, and with
// Options.AdminToken the admin API under /v1/admin/ (admin.go): tenants,
// API keys, physical tables, the lifecycle manager's last cycle and plan,
// the capacity planner, and CPU profiles of the server (profile.go).
//
// Every other /v1 call carries "Authorization: Bearer <api key>"; the key
// decides the tenant, and a missing, unknown or revoked key is 401 with a
// WWW-Authenticate: Bearer challenge; a read-only key is 403 on a route
// that writes. Keys are checked through the tenants' key cache: a
// revocation holds at once on the server it went through and within the
// cache's TTL on every other (docs/design.md, Caching). A tenant only ever reads and
// writes its own logical tables: a table another tenant wrote is 404 to
// it. With Options.CORSOrigins, browsers on those origins may call the
// API (cors.go).
//
// # Writes
//
// Every write goes through the write pipeline (package ingest, in its
// mode Refuse), which the MQTT subscriber's messages go through too: the
// server reads the body and answers, the pipeline authenticates, admits
// and writes. The body is read as it arrives, within a server-wide
// budget of body bytes in flight and a read timeout (see body.go), and
// whole (at most Options.MaxBodyBytes, after gzip decompression when
// Content-Encoding is gzip), decoded within a server-wide budget of
// decoded events (Options.MaxEventBytesInFlight, shared with the MQTT
// subscriber; admission.go), of both of which one tenant holds at most
// Options.TenantShare, and within its tenant's write rates
// (tenant.Limits: 429 with Retry-After naming the limit), and validated
// before anything is written: one bad event refuses the request with 400
// and a problem per bad event, by its 0-based index, and nothing is
// stored. A request without a Content-Type is read as a JSON array; one
// with another type than JSON or NDJSON is 415. 200 {"written": N} means
// every event is durable. Event ids are idempotent, so a client that gets
// a 5xx, a timeout or no answer at all may send the same request again
// and nothing is stored twice; a 5xx for a store that failed part-way
// lists the indexes of the events not written under "unwritten".
//
// # InfluxDB
//
// The InfluxDB write endpoints take line protocol (package lineproto) as
// InfluxDB 1.x (POST /write) and 2.x (POST /api/v2/write) do, so that
// Telegraf, the influx CLI and InfluxDB's client libraries write to
// timetable unchanged. The measurement names the logical table and the
// sorted tag set the series; db, rp, bucket and org are accepted and name
// nothing, since the API key names the tenant and the measurement the
// table. precision is ns (the default), us (or u), ms or s. The key comes
// as Authorization: Token (or Bearer), as the password of Basic
// authentication, or as p=; two different keys are a 400. A body is
// validated whole and written only when every line is good, as the JSON
// API does; a body of several measurements is checked table by table
// (engine.DB.CheckWrite) and written as one request (engine.DB.
// WriteTables), whose new physical tables the table budget counts
// together before any table is written. Success is 204 No
// Content. Errors are the JSON API's body, whose "error" is also
// InfluxDB 1.x's ("... unable to parse '...': ..."), with "lines" naming
// each bad line; the 2.x endpoint adds InfluxDB 2.x's "code" and
// "message". GET /ping answers 204 with the X-Influxdb-Version header
// clients read, or 200 and the version with verbose=true; it asks nothing
// of the store.
//
// GET and POST /query answer InfluxQL as InfluxDB 1.x does (influxql.go,
// package influxql, docs/influxql.md), for Grafana's InfluxDB data source
// and InfluxDB's clients: the key is taken as on /write, a key of scope
// read is enough (p= in a form body too), and db names the key's tenant
// whatever it says. Each statement answers in its own result, its error
// in it; a query that does not parse, or is past a bound of package
// influxql (MaxDepth, MaxOperators, numbers past int64), is a 400. A
// query is one of its tenant's concurrent queries, as a /v1 read is.
//
// # Queries
//
// from and to are RFC 3339 times (a fraction of up to nine digits, any
// offset) or integer Unix milliseconds, both inclusive. Decision: both
// are optional, so that "the latest ten events" is one short URL: to
// defaults to the server's now, and from to 24 hours before to (never
// before the Unix epoch). Events stamped in the future (a client clock
// ahead, within the accepted skew) are outside the default range; name
// to explicitly to see them. order is asc (the default) or desc, limit a
// positive integer up to the engine's maximum (the engine's default when
// absent), fields a comma-separated list of the fields to return.
// Unknown or repeated parameters are refused by name rather than ignored,
// as a misspelt parameter would otherwise silently widen the query.
//
// A query or aggregate without a series reads every series of the table,
// in memory bounded by a small constant per series, within the engine's
// query budget (engine.Options.MaxQueryPartitions): one that finds no
// room in it within engine.Options.QueryBudgetWait is 503 with
// Retry-After, and one whose tenant holds its max_query_partitions of it
// (at most TenantShare of the budget) 429 naming that limit. Reads of one
// series take nothing from the budget.
//
// InfluxQL's answers (/query, package influxql) take their memory from
// the same budget (engine.QueryHold), at engine.QueryPartitionBytes a
// partition: the statements of a request, raw and aggregate together,
// are counted before any is built (an aggregate's series × buckets,
// filled ones too; a raw SELECT's rows of a group), a request over its
// tenant's max_query_partitions is 413 naming it, and a statement that
// finds the tenant's share held 429 as a read does. The answer is
// streamed series by series; the first 64 KiB are kept, so that a request
// refused or failing before them is answered with its status, but a
// chunked answer's documents are sent and flushed each as it is complete,
// so that its client reads them as they are built.
//
// The answer is {"events": [...], "next_cursor": "..."}, next_cursor
// absent on the last page. To get the next page, send the same request
// with cursor set to next_cursor. The cursor carries the range the first
// page resolved, so paging a query that relies on the default range keeps
// reading the same range while the clock moves on; the engine signs the
// cursor with the query it belongs to, so an altered cursor, or one used
// with another table, series, range, order or fields, is 400.
//
// # Errors
//
// Errors are JSON, {"error": "...", "problems": [{"index": 3, "reason":
// "..."}]}, problems present for refused events only: 400 for bad input,
// 401, 403 for a write that needs a new table while the account's tables
// are near its quota (engine.ErrNearTableQuota), 404 for an unknown
// logical table or path, 405 with an Allow header, 409 for a tenant that
// exists or a key rotated already (and for a read of an archived period
// whose archive does not match its manifest: storage.ErrDamaged), 413 for
// a body or batch over the limits (or over its tenant's burst, or whose
// decoded events alone are estimated at more than the whole events budget)
// and for an InfluxQL request whose answers are more than its tenant's
// max_query_partitions, 415 for an unsupported Content-Type or
// Content-Encoding, 429 with Retry-After for a tenant over one of its
// limits (write rates, concurrent writes and queries, query partitions,
// its share of a budget, its new tables of the hour: engine.ErrTableRate;
// the message names it; a filter past its limits is a 400 naming the
// limit), 503 with Retry-After when the store throttles
// (storage.ErrThrottled), cannot be reached or fails on its side
// (storage.ErrUnavailable), the query budget has no room (engine.ErrBusy)
// or the server is closing, 500 for any other failure of the store. Every
// 429 and 503 carries Retry-After, whole seconds and at least 1; a write
// refused with either before its body was read whole has the rest of it
// read and discarded first, so that a client that sends the whole body
// before reading gets the answer (body.go). Rule: a 5xx is only ever an
// error the same request may overcome when sent again; a request that
// cannot succeed is a 4xx. An API key the server has not seen yet, looked
// up while the store is down, is 503: the server cannot tell it is
// unknown. A 5xx is always logged with its cause; the client gets the
// request id (also in the X-Request-Id header) to find it.
//
// # Readiness
//
// GET /readyz is the load balancer's check: the engine's Ping, one read
// of the meta table through the store's retries, bounded by
// Options.ReadyTimeout. 503 carries Retry-After and a reason of a few
// fixed words; the cause goes to the request log. /healthz stays a pure
// liveness check. Nothing about an outage is cached: once the store
// answers, /readyz is 200 and requests succeed on the same server.
//
// # Operations
//
// Each request is logged once with log/slog when it ends (method, path,
// route, status, duration, sizes, tenant, request id; the error for a
// failed one): at Error level for 5xx, Info otherwise, and Debug for
// /healthz, /readyz and /metrics so probes and scrapes do not drown the
// log. Metrics are
// registered on Options.Registry, never on a global registry:
// timetable_http_requests_total and timetable_http_request_duration_seconds by
// route, method and code, and timetable_http_requests_in_flight for /v1,
// counted by promhttp's instrument handlers curried by route.
//
// Serve runs the server on a listener until its context ends, then stops
// accepting connections and waits up to Options.ShutdownTimeout for the
// requests in flight to finish; those still running then are cut off,
// their contexts cancelled, so that their work stops. Closing the engine
// and the store is the caller's job, after Serve returns.
package server
