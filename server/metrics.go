package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, on the registry /metrics
// exposes.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry) *metrics {
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
	}
	reg.MustRegister(m.requests, m.seconds, m.inFlight)
	return m
}

// instrument counts and times the requests of one route; inFlight tells
// whether they count in timetable_http_requests_in_flight.
func (s *Server) instrument(route string, inFlight bool, h http.Handler) http.Handler {
	labels := prometheus.Labels{"route": route}
	h = promhttp.InstrumentHandlerCounter(s.metrics.requests.MustCurryWith(labels), h)
	h = promhttp.InstrumentHandlerDuration(s.metrics.seconds.MustCurryWith(labels), h)
	if inFlight {
		h = promhttp.InstrumentHandlerInFlight(s.metrics.inFlight, h)
	}
	return h
}

// handler serves the registry in the Prometheus exposition formats.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
