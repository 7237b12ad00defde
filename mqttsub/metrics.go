package mqttsub

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the subscriber's Prometheus metrics, labelled by
// subscription (its client id).
type metrics struct {
	received           *prometheus.CounterVec
	messages           *prometheus.CounterVec
	events             *prometheus.CounterVec
	writeFailures      *prometheus.CounterVec
	deadLetterFailures *prometheus.CounterVec
	connected          *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	labels := []string{"subscription"}
	m := &metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_mqtt_messages_received_total",
			Help: "MQTT messages received, by subscription (its client id); a redelivered message counts again.",
		}, labels),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_mqtt_messages_total",
			Help: "MQTT messages acknowledged, by subscription and result: written (every event durable), invalid, or refused by the table budget (both logged, and sent to the dead-letter topic when there is one).",
		}, []string{"subscription", "result"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_mqtt_events_written_total",
			Help: "Events of MQTT messages written, by subscription.",
		}, labels),
		writeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_mqtt_write_failures_total",
			Help: "Writes of MQTT messages the store failed, retried with their messages unacknowledged, by subscription.",
		}, labels),
		deadLetterFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_mqtt_dead_letter_failures_total",
			Help: "Invalid MQTT messages that could not be published to the dead-letter topic, left unacknowledged for the broker to send again, by subscription.",
		}, labels),
		connected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "timetable_mqtt_connected",
			Help: "Whether the subscription is connected to its broker and subscribed (1) or not (0).",
		}, labels),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.received, m.messages, m.events, m.writeFailures, m.deadLetterFailures, m.connected} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("mqtt: register metrics: %w", err)
			}
		}
	}
	return m, nil
}

// subscriptionMetrics are the metrics of one subscription.
type subscriptionMetrics struct {
	received, written, invalid, refused, events, writeFailures, deadLetterFailures prometheus.Counter
	connected                                                                      prometheus.Gauge
}

// of returns the metrics of the subscription of a client id.
func (m *metrics) of(id string) subscriptionMetrics {
	return subscriptionMetrics{
		received:           m.received.WithLabelValues(id),
		written:            m.messages.WithLabelValues(id, "written"),
		invalid:            m.messages.WithLabelValues(id, "invalid"),
		refused:            m.messages.WithLabelValues(id, "refused"),
		events:             m.events.WithLabelValues(id),
		writeFailures:      m.writeFailures.WithLabelValues(id),
		deadLetterFailures: m.deadLetterFailures.WithLabelValues(id),
		connected:          m.connected.WithLabelValues(id),
	}
}
