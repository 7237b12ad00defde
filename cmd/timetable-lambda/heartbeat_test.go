package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

type listed []string

func (l listed) ListTables(_ context.Context, _ string, fn func(string) bool) error {
	for _, n := range l {
		if !fn(n) {
			break
		}
	}
	return nil
}

type unlisted struct{}

func (unlisted) ListTables(context.Context, string, func(string) bool) error {
	return errors.New("AccessDeniedException")
}

// emf is a line of CloudWatch's embedded metric format.
type emf struct {
	AWS struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
}

// TestHeartbeat: the line is embedded metric format (a root _aws with a
// namespace, dimension sets and metrics whose values and dimensions are
// root members), its metrics are those the template's alarms watch,
// in their namespace and dimension, and the table quota's share is the
// listed tables over the quota.
func TestHeartbeat(t *testing.T) {
	now := time.Date(2017, 5, 10, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	h := heartbeat{out: &out, tables: listed{"a", "b", "c", "d", "e"}, quota: 20, function: "timetable-Lifecycle-x", now: func() time.Time { return now }}
	require.NoError(t, h.beat(context.Background()))
	require.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "one line")

	var line map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &line))
	var m emf
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	require.Equal(t, now.UnixMilli(), m.AWS.Timestamp)
	require.Len(t, m.AWS.CloudWatchMetrics, 1)
	d := m.AWS.CloudWatchMetrics[0]
	require.Equal(t, [][]string{{"FunctionName"}}, d.Dimensions)
	require.Equal(t, "timetable-Lifecycle-x", line["FunctionName"])
	metrics := map[string]any{}
	for _, x := range d.Metrics {
		require.Contains(t, line, x.Name, "a metric's value is a root member")
		metrics[x.Name] = line[x.Name]
	}
	require.Equal(t, map[string]any{metricRuns: 1.0, metricTableQuotaUsed: 25.0}, metrics)

	// The template's alarms watch these metrics, in this namespace and
	// dimension.
	data, err := os.ReadFile("../../deploy/template.yaml")
	require.NoError(t, err)
	var tpl struct {
		Resources map[string]struct {
			Properties struct {
				Namespace        string `yaml:"Namespace"`
				MetricName       string `yaml:"MetricName"`
				TreatMissingData string `yaml:"TreatMissingData"`
				Dimensions       []struct {
					Name string `yaml:"Name"`
				} `yaml:"Dimensions"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	require.NoError(t, yaml.Unmarshal(data, &tpl))
	for alarm, metric := range map[string]string{"MissingRunAlarm": metricRuns, "TableQuotaAlarm": metricTableQuotaUsed} {
		p := tpl.Resources[alarm].Properties
		require.Equal(t, d.Namespace, p.Namespace, alarm)
		require.Equal(t, metric, p.MetricName, alarm)
		require.Len(t, p.Dimensions, 1, alarm)
		require.Equal(t, "FunctionName", p.Dimensions[0].Name, alarm)
	}
	require.Equal(t, "breaching", tpl.Resources["MissingRunAlarm"].Properties.TreatMissingData, "no heartbeat is a missing run")

	// Tables that cannot be listed: the run is still a heartbeat.
	out.Reset()
	h.tables = unlisted{}
	require.NoError(t, h.beat(context.Background()))
	line = nil
	require.NoError(t, json.Unmarshal(out.Bytes(), &line))
	require.Equal(t, 1.0, line[metricRuns])
	require.NotContains(t, line, metricTableQuotaUsed)
	require.Contains(t, line["TablesError"], "AccessDenied")
}

// TestTableQuotaFromEnv: the template passes the quota in the variable
// the function reads, and a quota that is not a positive number is
// refused before anything is called.
func TestTableQuotaFromEnv(t *testing.T) {
	data, err := os.ReadFile("../../deploy/template.yaml")
	require.NoError(t, err)
	require.Contains(t, string(data), envTableQuota+": {Ref: TableQuota}")
	for _, bad := range []string{"0", "-3", "many"} {
		env := map[string]string{envTableQuota: bad}
		_, _, err := newReconciler(context.Background(), wiring{getenv: func(k string) string { return env[k] }})
		require.ErrorContains(t, err, envTableQuota, bad)
	}
}
