package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/ingest"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// NewEventBudget returns a budget of decoded events of size bytes (zero:
// DefaultMaxEventBytesInFlight) of which a tenant holds at most
// tenantShare (zero: DefaultTenantShare), for a caller that shares one
// between the server and the MQTT subscriber (Options.EventBudget).
func NewEventBudget(size int64, tenantShare float64) *admission.Budget {
	if size == 0 {
		size = DefaultMaxEventBytesInFlight
	}
	if tenantShare == 0 {
		tenantShare = DefaultTenantShare
	}
	return admission.NewBudget("bytes of decoded events (max_event_bytes_in_flight)", size, tenantShare)
}

// Defaults of Options.
const (
	// DefaultMaxBodyBytes bounds a request body: 16 MiB, about 90,000
	// events of 180 bytes. MQTT messages have the same limit.
	DefaultMaxBodyBytes = admission.DefaultMaxRequestBytes
	// DefaultMaxEvents bounds the events of one write request, or MQTT
	// message.
	DefaultMaxEvents = admission.DefaultMaxRequestEvents
	// DefaultMaxBodyBytesInFlight bounds the bytes of request bodies the
	// server holds at once: 32 MiB, two bodies of the largest size,
	// sized with DefaultMaxEventBytesInFlight
	// (admission.DefaultMaxEventBytes).
	DefaultMaxBodyBytesInFlight = 32 << 20
	// DefaultBodyBudgetWait is how long a request waits for room in the
	// body budget before it is answered 503.
	DefaultBodyBudgetWait = time.Second
	// DefaultBodyReadTimeout is how long a request body may take to
	// arrive.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultShutdownTimeout bounds the wait for requests in flight when
	// Serve stops.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultQueryRange is how far before to a query's from lies when the
	// request does not name it.
	DefaultQueryRange = 24 * time.Hour
	// DefaultReadyTimeout bounds the store's answer to GET /readyz.
	DefaultReadyTimeout = 2 * time.Second
	// DefaultMaxEventBytesInFlight bounds the memory, as estimated by
	// admission.BatchBytes, that the decoded events of write requests
	// hold at once: 96 MiB, which holds a request of DefaultMaxEvents
	// minimal events, or of DefaultMaxBodyBytes of any shape, and with
	// DefaultMaxBodyBytesInFlight keeps a server of 512 MiB with
	// GOMEMLIMIT=352MiB under it (admission.DefaultMaxEventBytes).
	DefaultMaxEventBytesInFlight = admission.DefaultMaxEventBytes
	// DefaultTenantShare is the part of each server-wide budget one
	// tenant may hold.
	DefaultTenantShare = admission.DefaultTenantShare
	// DefaultWriteEventsPerSecond is a tenant's write rate in events,
	// with bursts of DefaultWriteEventsBurst: two requests of the most
	// events.
	DefaultWriteEventsPerSecond = 100_000
	DefaultWriteEventsBurst     = 2 * DefaultMaxEvents
	// DefaultWriteBytesPerSecond is a tenant's write rate in body bytes,
	// with bursts of DefaultWriteBytesBurst: two bodies of the largest
	// size.
	DefaultWriteBytesPerSecond = 16 << 20
	DefaultWriteBytesBurst     = 2 * DefaultMaxBodyBytes
	// DefaultMaxConcurrentQueries is the queries and aggregates a tenant
	// may run at once.
	DefaultMaxConcurrentQueries = 16
	// DefaultMaxQueryPartitions is the partitions of the query budget
	// (engine.Options.MaxQueryPartitions) a tenant's reads of every
	// series may hold at once: a quarter of the engine's default budget.
	// A tenant holds at most TenantShare of the budget whatever its
	// limit.
	DefaultMaxQueryPartitions = engine.DefaultMaxQueryPartitions / 4
	// DefaultMaxConcurrentWrites is the write requests of a tenant the
	// server works on at once: more wait up to BodyBudgetWait for a
	// turn, then are answered 429, so that one tenant's many writers
	// leave the CPU to others.
	DefaultMaxConcurrentWrites = 8
)

// DefaultTenantLimits returns the limits of a tenant without overrides.
func DefaultTenantLimits() tenant.Limits {
	return tenant.Limits{
		WriteEventsPerSecond: DefaultWriteEventsPerSecond,
		WriteEventsBurst:     DefaultWriteEventsBurst,
		WriteBytesPerSecond:  DefaultWriteBytesPerSecond,
		WriteBytesBurst:      DefaultWriteBytesBurst,
		MaxConcurrentQueries: DefaultMaxConcurrentQueries,
		MaxQueryPartitions:   DefaultMaxQueryPartitions,
		MaxConcurrentWrites:  DefaultMaxConcurrentWrites,
	}
}

// Options configure a Server. The zero value is the default for every
// field, as the Default constants say; a negative number or duration is
// an error (Validate).
type Options struct {
	// Logger receives the request log and the causes of 5xx answers; nil
	// means slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body, after decompression; a larger
	// one is refused with 413. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxEvents bounds the events of one write request; more is refused
	// with 413. Zero means DefaultMaxEvents.
	MaxEvents int
	// MaxBodyBytesInFlight bounds the bytes of request bodies held at
	// once by the whole server; a request that finds no room within
	// BodyBudgetWait is answered 503 with Retry-After. Zero means
	// DefaultMaxBodyBytesInFlight; it is raised to hold a body of
	// MaxBodyBytes if lower.
	MaxBodyBytesInFlight int64
	// BodyBudgetWait is how long a request waits for room in the body
	// budget. Zero means DefaultBodyBudgetWait.
	BodyBudgetWait time.Duration
	// BodyReadTimeout is how long a request body may take to arrive,
	// from the start of the request; a slower one is answered 408. Zero
	// means DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// Registry receives the server's metrics and is what /metrics
	// exposes: pass the registry the engine registers on to expose both.
	// Nil means a registry of the server's own.
	Registry *prometheus.Registry
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// once its context ends. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// QueryRange is how far before to a query's from lies when the
	// request leaves from out. Zero means DefaultQueryRange.
	QueryRange time.Duration
	// ReadyTimeout bounds how long GET /readyz waits for the store, its
	// retries included, before it answers 503. Zero means
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// AdminToken, when set, turns the admin API on (/v1/admin/, see
	// admin.go) for requests that carry it as a bearer token. New keeps
	// only its SHA-256. Empty means no admin API at all.
	AdminToken string
	// StoreKind names the store the engine runs on, "pebble" or
	// "dynamodb", as GET /v1/admin/tables tells the console (which shows
	// DynamoDB's billing, capacity and throttles only where they apply).
	// Empty means not said.
	StoreKind string
	// Lifecycle is the lifecycle manager running beside the server, whose
	// last cycle and plan the admin API shows; nil means none runs.
	Lifecycle Lifecycle
	// MaxEventBytesInFlight bounds the memory the decoded events of write
	// requests hold at once, as admission.BatchBytes estimates it; a
	// request that finds no room within BodyBudgetWait is answered 503
	// with Retry-After, and one whose events alone are estimated at more
	// is answered 413. It must hold MaxEvents events without fields
	// (Validate). Zero means DefaultMaxEventBytesInFlight. Ignored
	// with EventBudget, whose size must hold them instead.
	MaxEventBytesInFlight int64
	// EventBudget is the budget of decoded events the server shares with
	// the other ways events come in (the MQTT subscriber), so that one
	// budget bounds them all. Nil means a budget of the server's own, of
	// MaxEventBytesInFlight.
	EventBudget *admission.Budget
	// TenantShare is the part, above 0 and at most 1, of the body budget,
	// of the events budget and of the engine's query budget that one
	// tenant may hold; a request of a
	// tenant holding its share waits, then is answered 429. Zero means
	// DefaultTenantShare. Ignored for the events budget with EventBudget,
	// which has its own.
	TenantShare float64
	// TenantLimits are the limits of a tenant without overrides (the
	// admin API's PUT /v1/admin/tenants/{tenant}/limits); a zero field
	// means the Default constant. Ignored with Tenants.
	TenantLimits tenant.Limits
	// Tenants keeps the tenants' rates and concurrent queries, for a
	// caller that shares them with the MQTT subscriber. Nil means the
	// server's own, under TenantLimits and the overrides of the tenant
	// registry, by the wall clock.
	Tenants *admission.Tenants
	// TenantDirectory is the registry of tenants and their API keys, with
	// its cache of keys (tenant.Options.KeyCache): it authenticates the
	// requests, the admin API changes it, and the tenants' overrides are
	// read from it. The caller shares it with the MQTT subscriber, so
	// that one cache serves both. Required.
	TenantDirectory *tenant.Directory
	// CPU, when set, is the pool of slots for heavy CPU work
	// (admission.CPU): a write takes a slot for its decoding and another
	// for its write, and an aggregate of every series one for each turn
	// of series it summarises (engine.WithCPU), so that other tenants'
	// requests find a core whatever aggregates and writes run. Set it for
	// a store whose reads are served from memory and local disk (Pebble);
	// a slot held through a read that waits on the network (DynamoDB)
	// would only idle a core. The caller shares it with the MQTT
	// subscriber; the server registers its metrics (timetable_cpu_slots,
	// timetable_cpu_slots_held, timetable_cpu_slots_taken_total) on
	// Registry. Nil means none.
	CPU *admission.CPU
	// Clock tells the time of the tenants' write rates and of when
	// their limits are read again; nil means the wall clock. Ignored with
	// Tenants.
	Clock clock.Clock
	// TenantNamesInMetrics labels the per-tenant metrics with tenants'
	// names. False labels them with a hash of the name (the admin API's
	// tenant answer shows it as metrics_label), so that names do not
	// leave the server through a metrics pipeline.
	TenantNamesInMetrics bool
	// CORSOrigins are the origins (scheme://host[:port]) whose pages may
	// call the API from a browser; "*" allows every origin. Empty means
	// no CORS headers at all.
	CORSOrigins []string
}

// EnsureDefaults sets every zero field to its default.
func (o *Options) EnsureDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxEvents == 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if o.MaxBodyBytesInFlight == 0 {
		o.MaxBodyBytesInFlight = DefaultMaxBodyBytesInFlight
	}
	if o.BodyBudgetWait == 0 {
		o.BodyBudgetWait = DefaultBodyBudgetWait
	}
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.QueryRange == 0 {
		o.QueryRange = DefaultQueryRange
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.MaxEventBytesInFlight == 0 {
		o.MaxEventBytesInFlight = DefaultMaxEventBytesInFlight
	}
	if o.TenantShare == 0 {
		o.TenantShare = DefaultTenantShare
	}
	o.TenantLimits = o.TenantLimits.Or(DefaultTenantLimits())
}

// errInvalidOptions marks Options that New refuses.
var errInvalidOptions = errors.New("timetable: invalid server options")

// Validate reports the fields that hold a negative number or duration,
// and an events budget (MaxEventBytesInFlight, or EventBudget's size)
// that could not hold a request of MaxEvents events even without fields
// (admission.SmallestRequestBytes).
func (o *Options) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBodyBytes", o.MaxBodyBytes},
		{"MaxEvents", int64(o.MaxEvents)},
		{"MaxBodyBytesInFlight", o.MaxBodyBytesInFlight},
		{"BodyBudgetWait", int64(o.BodyBudgetWait)},
		{"BodyReadTimeout", int64(o.BodyReadTimeout)},
		{"ShutdownTimeout", int64(o.ShutdownTimeout)},
		{"QueryRange", int64(o.QueryRange)},
		{"ReadyTimeout", int64(o.ReadyTimeout)},
		{"MaxEventBytesInFlight", o.MaxEventBytesInFlight},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative", errInvalidOptions, f.name))
		}
	}
	if o.TenantShare < 0 || o.TenantShare > 1 || math.IsNaN(o.TenantShare) {
		errs = append(errs, fmt.Errorf("%w: TenantShare %v is not between 0 and 1", errInvalidOptions, o.TenantShare))
	}
	if err := o.TenantLimits.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: TenantLimits: %w", errInvalidOptions, err))
	}
	events := o.MaxEventBytesInFlight
	if o.EventBudget != nil {
		events = o.EventBudget.Size()
	}
	if least := admission.SmallestRequestBytes(o.MaxEvents); events > 0 && least > events {
		errs = append(errs, fmt.Errorf("%w: MaxEventBytesInFlight (max_event_bytes_in_flight) %d cannot hold a request of MaxEvents (max_events) %d events, even without fields (estimated at %d bytes): every such request would be refused; raise it or lower MaxEvents", errInvalidOptions, events, o.MaxEvents, least))
	}
	return errors.Join(errs...)
}

// Server is the HTTP API v1 over one engine. It is an http.Handler; its
// methods may be called from any number of goroutines at once. It does
// not own the engine: closing the engine is the caller's job, once the
// server has stopped.
type Server struct {
	db      *engine.DB
	opts    Options
	log     *slog.Logger
	metrics *metrics
	handler http.Handler
	// bodies is the budget of request body bytes in flight.
	bodies *admission.Budget
	// events is the budget of decoded events in flight.
	events *admission.Budget
	// discards bounds the bytes a second of refused bodies that are read
	// and thrown away (discardBody), all together.
	discards *rate.Limiter
	// tenants keeps the tenants' rates and concurrent queries.
	tenants *admission.Tenants
	// ingest is the write pipeline of every write, and authenticates
	// every request.
	ingest *ingest.Pipeline
	// adminHash is the SHA-256 of the admin token; nil without one.
	adminHash *[32]byte
	// influxSeries keeps measurements' series between InfluxQL queries.
	influxSeries *influxql.SeriesCache
}

// New returns a Server answering for db, or an error for invalid
// options. It registers the server's metrics on opts.Registry, so it must
// be called once per registry.
func New(db *engine.DB, opts Options) (*Server, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.TenantDirectory == nil {
		return nil, fmt.Errorf("%w: TenantDirectory is nil", errInvalidOptions)
	}
	// A body of the largest size must fit, with its buffer's last step.
	opts.MaxBodyBytesInFlight = max(opts.MaxBodyBytesInFlight, opts.MaxBodyBytes+ingest.BodyStep)
	if err := checkOrigins(opts.CORSOrigins); err != nil {
		return nil, err
	}
	s := &Server{db: db, opts: opts, log: opts.Logger,
		bodies:   admission.NewBudget("bytes of request bodies (max_body_bytes_in_flight)", opts.MaxBodyBytesInFlight, opts.TenantShare),
		discards: rate.NewLimiter(rate.Limit(opts.MaxBodyBytesInFlight), discardStep),
		events:   opts.EventBudget, tenants: opts.Tenants,
		influxSeries: influxql.NewSeriesCache(0, 0, db.Options().Clock.Now)}
	if s.events == nil {
		s.events = NewEventBudget(opts.MaxEventBytesInFlight, opts.TenantShare)
	}
	if s.tenants == nil {
		s.tenants = admission.NewTenants(admission.TenantsOptions{Defaults: opts.TenantLimits, Lookup: opts.TenantDirectory.Limits, Logger: opts.Logger, Clock: opts.Clock})
	}
	var err error
	s.ingest, err = ingest.New(db, ingest.Options{TenantDirectory: opts.TenantDirectory, Limits: s.tenants, BodyBudget: s.bodies, MaxBodyBytes: opts.MaxBodyBytes,
		EventBudget: s.events, CPU: opts.CPU, MaxEvents: opts.MaxEvents, Wait: opts.BodyBudgetWait})
	if err != nil {
		return nil, err
	}
	s.metrics = newMetrics(opts.Registry, s)
	if opts.AdminToken != "" {
		h := sha256.Sum256([]byte(opts.AdminToken))
		s.adminHash = &h
		s.opts.AdminToken = ""
	}
	s.handler = s.logRequests(s.cors(s.canonicalPaths(s.mux())))
	return s, nil
}

// canonicalPaths answers a path with an empty, "." or ".." step with a
// 400 that says so, where ServeMux would redirect to the cleaned path and
// so to another table, or to none: /v1/tables/./events names no table.
// A query string that does not decode (%zz, a ; separator) is a 400 too,
// where url.URL.Query would drop the parameter silently.
func (s *Server) canonicalPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !queryDecodes(r.URL.RawQuery) {
			_, err := url.ParseQuery(r.URL.RawQuery) // for its reason
			s.fail(w, r, fmt.Errorf("%w: the query string does not decode: %v", ErrBadParameter, err))
			return
		}
		p := r.URL.Path
		if p == "/" || path.Clean(p) == p {
			next.ServeHTTP(w, r)
			return
		}
		msg := fmt.Sprintf("timetable: path %q has an empty, . or .. step", p)
		if rest, ok := strings.CutPrefix(p, "/v1/tables/"); ok {
			table, _, _ := strings.Cut(rest, "/")
			msg = fmt.Sprintf("timetable: bad name: table %q: use 1 to 255 of A-Z, a-z, 0-9, _, . and -, other than . and ..", table)
		}
		s.fail(w, r, &httpError{status: http.StatusBadRequest, msg: msg})
	})
}

// queryDecodes reports whether url.ParseQuery would decode a query
// string without an error, building nothing: it errs on a ";" and on a
// "%" not followed by two hex digits, and on nothing else. The handler
// that reads the parameters parses them once.
func queryDecodes(raw string) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// healthz answers GET /healthz: the server is up and serving. It is a
// liveness check and asks nothing of the store: a server whose store is
// down is alive, and restarting it would not help.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, api.Health{Status: api.StatusOK})
}

// readyz answers GET /readyz: 200 {"status":"ready"} when the store
// answers a read within Options.ReadyTimeout, else 503 with Retry-After
// and {"status":"unavailable","reason":...}. The reason is one of a few
// fixed phrases; the cause goes to the request log.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.ReadyTimeout)
	defer cancel()
	err := s.db.Ping(ctx)
	if err == nil {
		writeJSON(w, http.StatusOK, api.Health{Status: api.StatusReady})
		return
	}
	if info := infoOf(r); info != nil {
		info.err = err
	}
	w.Header().Set(api.RetryAfter, retryAfterSeconds)
	writeJSON(w, http.StatusServiceUnavailable, api.Health{Status: api.StatusUnavailable, Reason: notReadyReason(err, s.opts.ReadyTimeout)})
}

// notReadyReason says in a few words why Ping failed.
func notReadyReason(err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, engine.ErrClosed), errors.Is(err, storage.ErrClosed):
		return "server shutting down"
	case errors.Is(err, storage.ErrUnavailable):
		return "store unavailable"
	case errors.Is(err, storage.ErrThrottled):
		return "store throttling"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("store did not answer within %v", timeout)
	case errors.Is(err, storage.ErrTableNotFound):
		return "meta table not found"
	default:
		return "store error"
	}
}

// methodNotAllowed answers a known path called with a method it does not
// serve.
func (s *Server) methodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.fail(w, r, &httpError{status: http.StatusMethodNotAllowed, msg: "method " + r.Method + " not allowed on " + r.URL.Path + "; use " + allow})
	})
}
