package engine

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/storage"
)

// metrics are the engine's Prometheus metrics. With no registerer they are
// kept but never exported.
type metrics struct {
	eventsWritten  prometheus.Counter
	eventsFailed   prometheus.Counter
	writeSeconds   prometheus.Histogram
	eventsReturned prometheus.Counter
	querySeconds   *prometheus.HistogramVec
	// mapRequests counts the map layout's conditional writes and reads by
	// kind and result: how often a write path guessed wrong.
	mapRequests *prometheus.CounterVec
	// queryPartitions is the query budget in use, and queryBusy counts
	// the reads it turned away.
	queryPartitions prometheus.Gauge
	queryBusy       prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		eventsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "timetable_events_written_total", Help: "Events stored durably.",
		}),
		eventsFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "timetable_events_write_failed_total", Help: "Events a write could not store because the store failed.",
		}),
		writeSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "timetable_write_duration_seconds", Help: "Time to write one batch of events.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		eventsReturned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "timetable_events_returned_total", Help: "Events returned by queries.",
		}),
		querySeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "timetable_query_duration_seconds", Help: "Time to answer one query page (kind events) or one aggregate (kind aggregate), by kind and result (ok, error).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"kind", "result"}),
		mapRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_map_requests_total",
			Help: "Requests of map-layout writes, by kind (create, append, close, read) and result (ok, condition_failed, error).",
		}, []string{"kind", "result"}),
		queryPartitions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "timetable_query_budget_partitions", Help: "Partitions that reads of every series and QueryHolds (InfluxQL's answers) hold, out of Options.MaxQueryPartitions.",
		}),
		queryBusy: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "timetable_query_budget_exhausted_total", Help: "Reads of every series and QueryHolds refused with ErrBusy: no room in the query budget within Options.QueryBudgetWait.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.eventsWritten, m.eventsFailed, m.writeSeconds, m.eventsReturned, m.querySeconds, m.mapRequests, m.queryPartitions, m.queryBusy)
	}
	return m
}

func (m *metrics) observeWrite(events, failed int, d time.Duration) {
	m.eventsWritten.Add(float64(events - failed))
	m.eventsFailed.Add(float64(failed))
	m.writeSeconds.Observe(d.Seconds())
}

// Kinds of read, as the kind label of timetable_query_duration_seconds
// says them.
const (
	readEvents    = "events"
	readAggregate = "aggregate"
)

// observeQuery counts one read of a kind, which returned events events.
func (m *metrics) observeQuery(kind string, events int, d time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.eventsReturned.Add(float64(events))
	m.querySeconds.WithLabelValues(kind, result).Observe(d.Seconds())
}

// observeMap counts one request of a map-layout write.
func (m *metrics) observeMap(kind string, err error) {
	result := "ok"
	switch {
	case errors.Is(err, storage.ErrConditionFailed):
		result = "condition_failed"
	case errors.Is(err, storage.ErrItemNotFound):
		// A read that found no item is an answer, not a failure.
	case err != nil:
		result = "error"
	}
	m.mapRequests.WithLabelValues(kind, result).Inc()
}
