package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/console"
)

// Route is one endpoint of the API: the one list of them builds the
// multiplexer, the 404 answer and `timetable serve --help`.
type Route struct {
	Method  string
	Pattern string
	// Summary says in a line what the route does.
	Summary string
	// Admin routes are served only with an admin token.
	Admin bool
}

// route is a Route and how the server answers it.
type route struct {
	Route
	// handler builds the route's handler on a server.
	handler func(s *Server) http.Handler
	// inFlight counts the route's requests in
	// timetable_http_requests_in_flight.
	inFlight bool
}

// Route patterns, which are also the route label of the metrics.
const (
	routeEvents    = api.PathEvents
	routeAggregate = api.PathAggregate
	routeTables    = api.PathTables
	routeSeries    = api.PathSeries
	routeHealthz   = api.PathHealthz
	routeReadyz    = api.PathReadyz
	routeMetrics   = api.PathMetrics
	routeConsole   = "/{$}"
	routeAssets    = console.Prefix

	adminPrefix = api.PathAdmin
)

// routes is every route, in the order help lists them.
var routes = []route{
	{Route{"POST", routeEvents, "write events: a JSON array, or NDJSON with Content-Type: application/x-ndjson", false},
		func(s *Server) http.Handler { return s.writing(apiKey, s.writeEvents) }, true},
	{Route{"GET", routeEvents, "read events: ?from=&to=&series=&order=asc|desc&limit=&cursor=&fields=&filter=", false},
		func(s *Server) http.Handler { return s.authenticated(readAccess, s.counted(s.queryEvents)) }, true},
	{Route{"GET", routeAggregate, "aggregate events in buckets: ?from=&to=&series=&bucket=&fields=&fn=&fill=&filter=", false},
		func(s *Server) http.Handler { return s.authenticated(readAccess, s.counted(s.aggregate)) }, true},
	{Route{"GET", routeTables, "the tenant's logical tables, with their first and last event times", false},
		func(s *Server) http.Handler { return s.authenticated(readAccess, s.listTables) }, true},
	{Route{"GET", routeSeries, "a table's series: ?prefix=&limit=&cursor=", false},
		func(s *Server) http.Handler { return s.authenticated(readAccess, s.listSeries) }, true},
	{Route{"GET", routeHealthz, "liveness: 200 while the process serves", false},
		func(s *Server) http.Handler { return http.HandlerFunc(s.healthz) }, false},
	{Route{"GET", routeReadyz, "readiness: 200 when the store answers, else 503", false},
		func(s *Server) http.Handler { return http.HandlerFunc(s.readyz) }, false},
	{Route{"GET", routeMetrics, "Prometheus metrics", false},
		func(s *Server) http.Handler { return s.metrics.handler() }, false},
	{Route{"POST", routeInfluxWrite, "InfluxDB 1.x line protocol: ?db=&precision=ns|us|ms|s, the key as Token, Basic password or p=", false},
		func(s *Server) http.Handler {
			return s.writing(influxKey, s.influxWrite(influxV1Params))
		}, true},
	{Route{"POST", routeInfluxV2Write, "InfluxDB 2.x line protocol: ?bucket=&precision=ns|us|ms|s, Authorization: Token <api key>", false},
		func(s *Server) http.Handler {
			return influxV2(s.writing(influxKey, s.influxWrite(influxV2Params)))
		}, true},
	{Route{"GET", routeInfluxQuery, "InfluxQL (docs/influxql.md): ?q=&db=&epoch=&chunked=&chunk_size=&pretty=, the key as Token, Basic password or p=", false},
		func(s *Server) http.Handler {
			return s.authenticatedBy(influxQueryKey, readAccess, s.counted(s.influxQuery))
		}, true},
	{Route{"POST", routeInfluxQuery, "InfluxQL, the parameters in the form body or the URL", false},
		func(s *Server) http.Handler {
			return s.authenticatedBy(influxQueryKey, readAccess, s.counted(s.influxQuery))
		}, true},
	{Route{"GET", routeInfluxPing, "InfluxDB's ping: 204 with X-Influxdb-Version", false},
		func(s *Server) http.Handler { return http.HandlerFunc(s.influxPing) }, false},
	{Route{"GET", routeConsole, "the web console: sign in with an API key or the admin token", false},
		func(s *Server) http.Handler { return console.Handler() }, false},
	{Route{"GET", routeAssets, "the web console's files", false},
		func(s *Server) http.Handler { return console.Handler() }, false},

	{Route{"GET", api.PathTenants, "list tenants", true},
		func(s *Server) http.Handler { return s.admin(s.listTenants) }, true},
	{Route{"POST", api.PathTenants, `add a tenant: {"name": "..."}; answers its first API key, once`, true},
		func(s *Server) http.Handler { return s.admin(s.addTenant) }, true},
	{Route{"DELETE", api.PathTenant, "remove a tenant, revoking its keys: ?data=keep", true},
		func(s *Server) http.Handler { return s.admin(s.removeTenant) }, true},
	{Route{"GET", api.PathTenantLimits, "a tenant's limits: its overrides, those in force, and its usage of this server", true},
		func(s *Server) http.Handler { return s.admin(s.tenantLimits) }, true},
	{Route{"PUT", api.PathTenantLimits, `set a tenant's limits: {"write_events_per_second": N, "write_events_burst": N, "write_bytes_per_second": N, "write_bytes_burst": N, "max_concurrent_queries": N, "max_query_partitions": N, "max_concurrent_writes": N}; absent fields are the defaults`, true},
		func(s *Server) http.Handler { return s.admin(s.setTenantLimits) }, true},
	{Route{"GET", api.PathKeys, "list a tenant's API keys", true},
		func(s *Server) http.Handler { return s.admin(s.listKeys) }, true},
	{Route{"POST", api.PathKeys, `add an API key: {"scope": "all"|"read"}; answers it once`, true},
		func(s *Server) http.Handler { return s.admin(s.addKey) }, true},
	{Route{"DELETE", api.PathKey, "revoke an API key: at once here, within key_cache.ttl elsewhere", true},
		func(s *Server) http.Handler { return s.admin(s.revokeKey) }, true},
	{Route{"POST", api.PathRotateKey, `add a key of the same scope and revoke this one after a grace: {"grace": "24h"}`, true},
		func(s *Server) http.Handler { return s.admin(s.rotateKey) }, true},
	{Route{"GET", api.PathPhysicalTables, "the physical tables: registry facts, tier, status", true},
		func(s *Server) http.Handler { return s.admin(s.listPhysicalTables) }, true},
	{Route{"GET", api.PathLifecycle, "the last lifecycle cycle: when, outcome, actions", true},
		func(s *Server) http.Handler { return s.admin(s.lastCycle) }, true},
	{Route{"GET", api.PathPlan, "what a lifecycle cycle would do now, changing nothing", true},
		func(s *Server) http.Handler { return s.admin(s.plan) }, true},
	{Route{"GET", api.PathPlanner, "the capacity planner: ?rate=&item_bytes=&peak=&retention=&series=; its report and cost chart (SVG)", true},
		func(s *Server) http.Handler { return s.admin(s.capacityPlan) }, true},
	{Route{"GET", api.PathCPUProfile, "a CPU profile of the server in pprof's format: ?seconds= (1 to 60, 30 by default)", true},
		func(s *Server) http.Handler { return s.admin(s.cpuProfile) }, false},
}

// Routes returns every route of the API, admin routes included, in the
// order help lists them.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, r := range routes {
		out[i] = r.Route
	}
	return out
}

// served returns the routes this server serves: the admin ones only with
// an admin token.
func (s *Server) served() []route {
	var out []route
	for _, r := range routes {
		if !r.Admin || s.adminHash != nil {
			out = append(out, r)
		}
	}
	return out
}

// mux returns the multiplexer of the routes the server serves.
func (s *Server) mux() *http.ServeMux {
	mux := http.NewServeMux()
	allow := map[string][]string{}
	var patterns []string
	for _, r := range s.served() {
		mux.Handle(r.Method+" "+r.Pattern, s.instrument(r.Pattern, r.inFlight, r.handler(s)))
		if _, ok := allow[r.Pattern]; !ok {
			patterns = append(patterns, r.Pattern)
		}
		allow[r.Pattern] = append(allow[r.Pattern], r.Method)
		if r.Method == "GET" {
			allow[r.Pattern] = append(allow[r.Pattern], "HEAD")
		}
	}
	// ServeMux answers a known path with a wrong method, and an unknown
	// path, in plain text; these give the API's JSON errors instead. A
	// pattern with a method is more specific than one without, so these
	// only get what the routes above leave.
	for _, p := range patterns {
		methods := allow[p]
		slices.Sort(methods)
		mux.Handle(p, s.methodNotAllowed(strings.Join(methods, ", ")))
	}
	mux.Handle("/", s.notFound())
	return mux
}

// notFound answers a path no route serves, listing those that are.
func (s *Server) notFound() http.Handler {
	var list []string
	for _, r := range s.served() {
		list = append(list, r.Method+" "+r.Pattern)
	}
	known := "; the API serves " + strings.Join(list, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := "timetable: no endpoint " + r.URL.Path
		if strings.HasPrefix(r.URL.Path, adminPrefix) && s.adminHash == nil {
			msg += ": the admin API is off; start the server with TIMETABLE_ADMIN_TOKEN set, or admin_token_file in its configuration"
		}
		s.fail(w, r, &httpError{status: http.StatusNotFound, msg: msg + known})
	})
}

// checkParams refuses parameters a route does not know, and any given
// more than once, by name: a misspelt parameter would otherwise go
// unnoticed.
func checkParams(params url.Values, known ...string) error {
	for name, vs := range params {
		if !slices.Contains(known, name) {
			return fmt.Errorf("%w: unknown parameter %q; known are %s", ErrBadParameter, name, strings.Join(known, ", "))
		}
		if len(vs) > 1 {
			return fmt.Errorf("%w: %s: given %d times", ErrBadParameter, name, len(vs))
		}
	}
	return nil
}
