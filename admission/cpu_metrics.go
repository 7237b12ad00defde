package admission

import "github.com/prometheus/client_golang/prometheus"

// The pool's state as Prometheus metrics, read at every scrape: the
// server that owns the pool registers it (CPU is a
// prometheus.Collector).
var (
	cpuSlotsDesc = prometheus.NewDesc("timetable_cpu_slots",
		"Slots of the server's pool for heavy CPU work (aggregates, a write's decoding and its write).", nil, nil)
	cpuHeldDesc = prometheus.NewDesc("timetable_cpu_slots_held",
		"Slots of the CPU pool held now.", nil, nil)
	cpuTakenDesc = prometheus.NewDesc("timetable_cpu_slots_taken_total",
		"Slots of the CPU pool taken, each counted when taken; a tenant alone takes none (admission.CPU.AcquireFor).", nil, nil)
)

// Describe sends the descriptions of the pool's metrics.
func (c *CPU) Describe(ch chan<- *prometheus.Desc) {
	ch <- cpuSlotsDesc
	ch <- cpuHeldDesc
	ch <- cpuTakenDesc
}

// Collect sends the pool's metrics: its slots, those held now, and
// those taken since it was made.
func (c *CPU) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(cpuSlotsDesc, prometheus.GaugeValue, float64(c.slots))
	ch <- prometheus.MustNewConstMetric(cpuHeldDesc, prometheus.GaugeValue, float64(c.held.Load()))
	ch <- prometheus.MustNewConstMetric(cpuTakenDesc, prometheus.CounterValue, float64(c.taken.Load()))
}
