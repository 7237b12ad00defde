package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// The metrics the function writes to its log in CloudWatch's embedded
// metric format, which CloudWatch Logs turns into metrics of namespace
// metricNamespace with the dimension FunctionName; deploy/template.yaml's
// MissingRunAlarm and TableQuotaAlarm watch them.
const (
	metricNamespace = "timetable"
	// metricRuns is 1 for each invocation that succeeded: the heartbeat.
	// No run for 45 minutes is missing data, which the alarm treats as
	// breaching: a schedule disabled or deleted, or every run failing.
	metricRuns = "Runs"
	// metricTableQuotaUsed is the percentage of the account's table
	// quota (dynamostore.Options.TableQuota) that the region's tables
	// take: CreateTable fails at 100, and a deployment makes a table a
	// period.
	metricTableQuotaUsed = "TableQuotaUsed"
)

// tableLister is what the heartbeat needs of the store: its listing of
// every table in the region.
type tableLister interface {
	ListTables(ctx context.Context, after string, fn func(name string) bool) error
}

// heartbeat writes one embedded-metric-format line a successful run.
type heartbeat struct {
	out      io.Writer
	tables   tableLister
	quota    int
	function string
	now      func() time.Time
}

// beat writes the line: a run, and the share of the table quota used
// (left out when the tables cannot be listed, which the line then says).
func (h heartbeat) beat(ctx context.Context) error {
	n := 0
	countErr := h.tables.ListTables(ctx, "", func(string) bool { n++; return true })
	metrics := []map[string]string{{"Name": metricRuns, "Unit": "Count"}}
	line := map[string]any{"FunctionName": h.function, metricRuns: 1}
	if countErr == nil && h.quota > 0 {
		metrics = append(metrics, map[string]string{"Name": metricTableQuotaUsed, "Unit": "Percent"})
		line[metricTableQuotaUsed] = 100 * float64(n) / float64(h.quota)
		line["Tables"], line["TableQuota"] = n, h.quota
	} else if countErr != nil {
		line["TablesError"] = countErr.Error()
	}
	line["_aws"] = map[string]any{
		"Timestamp": h.now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  metricNamespace,
			"Dimensions": [][]string{{"FunctionName"}},
			"Metrics":    metrics,
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	if _, err := h.out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}
