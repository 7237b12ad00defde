package lifecycle

import "github.com/prometheus/client_golang/prometheus"

// metrics are the reconciler's Prometheus metrics.
type metrics struct {
	actions   *prometheus.CounterVec
	cycles    *prometheus.CounterVec
	lastCycle prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_lifecycle_actions_total",
			Help: "Lifecycle actions applied, by kind and outcome (done, deferred, failed).",
		}, []string{"action", "result"}),
		cycles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_lifecycle_cycles_total",
			Help: "Reconcile cycles, by result (ok, failed, lease_held, error).",
		}, []string{"result"}),
		lastCycle: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "timetable_lifecycle_last_cycle_timestamp_seconds",
			Help: "When the last reconcile cycle that acted ended, in Unix seconds (by the reconciler's clock).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.actions, m.cycles, m.lastCycle)
	}
	return m
}
