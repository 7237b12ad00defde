package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/timetabledb/timetable/admission"
)

// metrics are the server's Prometheus metrics, on the registry /metrics
// exposes.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// limited counts the requests refused for a tenant limit, by limit
	// and tenant.
	limited *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	m := &metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_http_requests_total",
			Help: "HTTP requests answered, by route, method and status code.",
		}, []string{"route", "method", "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "timetable_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route, method and status code.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"route", "method", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "timetable_http_requests_in_flight",
			Help: "HTTP requests to /v1 being served.",
		}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_tenant_limited_total",
			Help: "Requests answered 429 for a tenant limit, by limit and tenant (a hash of its name unless the server labels names).",
		}, []string{"limit", "tenant"}),
	}
	reg.MustRegister(m.requests, m.seconds, m.inFlight, m.limited, &budgetCollector{s: s})
	if s.opts.CPU != nil {
		// The server owns the pool, which it shares with the MQTT
		// subscriber: its metrics are the server's.
		reg.MustRegister(s.opts.CPU)
	}
	return m
}

// tenantLabel is a tenant's label value in the metrics: its name when
// Options.TenantNamesInMetrics, else a hash of it.
func (s *Server) tenantLabel(name string) string {
	if s.opts.TenantNamesInMetrics {
		return name
	}
	return MetricsLabel(name)
}

// MetricsLabel returns the label value of a tenant in the metrics of a
// server that does not label names: "t" and the first 12 hex digits of
// the SHA-256 of the name.
func MetricsLabel(name string) string {
	h := sha256.Sum256([]byte(name))
	return "t" + hex.EncodeToString(h[:6])
}

// Descriptions of the budget metrics, read at every scrape.
var (
	budgetSizeDesc = prometheus.NewDesc("timetable_budget_size_bytes",
		"Size of a server-wide budget of what requests hold: body (request bodies) or events (decoded events, estimated).", []string{"budget"}, nil)
	budgetUsedDesc = prometheus.NewDesc("timetable_budget_used_bytes",
		"What requests hold of a server-wide budget.", []string{"budget"}, nil)
	tenantBudgetDesc = prometheus.NewDesc("timetable_tenant_budget_used_bytes",
		"What a tenant's requests hold of a server-wide budget (tenants holding nothing are absent).", []string{"budget", "tenant"}, nil)
	tenantQueriesDesc = prometheus.NewDesc("timetable_tenant_queries_in_flight",
		"Queries and aggregates a tenant has running (tenants with none are absent).", []string{"tenant"}, nil)
)

// budgetCollector reports the budgets and what each tenant holds of
// them.
type budgetCollector struct{ s *Server }

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- budgetSizeDesc
	ch <- budgetUsedDesc
	ch <- tenantBudgetDesc
	ch <- tenantQueriesDesc
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	for name, b := range map[string]*admission.Budget{"body": s.bodies, "events": s.events} {
		used, _ := b.Used("")
		ch <- prometheus.MustNewConstMetric(budgetSizeDesc, prometheus.GaugeValue, float64(b.Size()), name)
		ch <- prometheus.MustNewConstMetric(budgetUsedDesc, prometheus.GaugeValue, float64(used), name)
		for t, n := range b.Tenants() {
			ch <- prometheus.MustNewConstMetric(tenantBudgetDesc, prometheus.GaugeValue, float64(n), name, s.tenantLabel(t))
		}
	}
	for t, n := range s.tenants.Running() {
		ch <- prometheus.MustNewConstMetric(tenantQueriesDesc, prometheus.GaugeValue, float64(n), s.tenantLabel(t))
	}
}

// instrument counts and times the requests of one route with promhttp's
// instrument handlers, as Prometheus instruments its own (web/web.go):
// the counter and the histogram curried by route, their code and method
// labels promhttp's; inFlight tells whether they count in
// timetable_http_requests_in_flight. promhttp's writers pass Flush, and
// http.ResponseController, to the writer underneath (Unwrap).
func (s *Server) instrument(route string, inFlight bool, h http.Handler) http.Handler {
	labels := prometheus.Labels{"route": route}
	h = promhttp.InstrumentHandlerCounter(s.metrics.requests.MustCurryWith(labels),
		promhttp.InstrumentHandlerDuration(s.metrics.seconds.MustCurryWith(labels), h))
	if inFlight {
		h = promhttp.InstrumentHandlerInFlight(s.metrics.inFlight, h)
	}
	return h
}

// handler serves the registry in the Prometheus exposition formats.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
