// Package metricstest reads a metric's value from a Prometheus
// registry, for the tests that check what a component counts.
package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// Value returns the sum of the values of the metrics named name that g
// gathers whose labels include labels (every one of them, when labels
// is nil): a counter's, a gauge's or an untyped metric's value. A metric
// g does not have is 0.
func Value(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metric
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetUntyped() != nil:
				sum += m.GetUntyped().GetValue()
			}
		}
	}
	return sum
}
