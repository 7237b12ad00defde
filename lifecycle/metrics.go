package lifecycle

import "github.com/prometheus/client_golang/prometheus"

// metrics are the reconciler's Prometheus metrics.
type metrics struct {
	actions   *prometheus.CounterVec
	cycles    *prometheus.CounterVec
	lastCycle prometheus.Gauge
	// tableQuota is 1 while the last attempt to create a table met the
	// account's table quota.
	tableQuota prometheus.Gauge
	// rewriteFailures counts rewrites whose verification failed
	// (compact.ErrVerify).
	rewriteFailures prometheus.Counter
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
		tableQuota: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "timetable_lifecycle_table_quota_reached",
			Help: "1 while the last table the lifecycle tried to create met the account's table quota, 0 once one is created.",
		}),
		rewriteFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "timetable_lifecycle_rewrite_verify_failures_total",
			Help: "Rewrites of a table into its next physical table whose copy did not verify; the next rewrite of that table is put off (compact.RetryDelay).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.actions, m.cycles, m.lastCycle, m.tableQuota, m.rewriteFailures)
	}
	return m
}
