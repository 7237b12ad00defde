package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestTheAWSCLIReadsTheData checks, with a real client that is not ours
// (the AWS CLI), that timetable's tables list and query as docs/operations.md
// shows, with fields as native DynamoDB types.
func TestTheAWSCLIReadsTheData(t *testing.T) {
	endpoint := os.Getenv(backends.EndpointEnv)
	if endpoint == "" {
		t.Skipf("set %s or run `make test` to start dynalite", backends.EndpointEnv)
	}
	aws, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not installed: apt-get install awscli")
	}
	store, cfg := backends.Dynamo().Open(t)
	// A row is what the CLI shows as the event; a chunk is a compressed
	// block (tt_c) it shows as bytes.
	cfg.Families[0].Layout = family.LayoutRow
	ctx := context.Background()
	db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.Write(ctx, "acme", "cars", []event.Event{{
		Time: apr10.Add(123456 * time.Microsecond), Series: "car-17", ID: "e1",
		Fields: map[string]any{
			"speed": json.Number("88.5"), "gear": "D", "moving": true,
			"tags": []any{"a", json.Number("1")}, "engine": map[string]any{"temp": nil},
		},
	}})
	require.NoError(t, err)
	tables, err := db.Tables(ctx)
	require.NoError(t, err)
	require.Len(t, tables, 1)
	name := tables[0].Name

	run := func(args ...string) map[string]any {
		t.Helper()
		region := os.Getenv("AWS_REGION")
		if region == "" {
			region = "us-east-1"
		}
		cmd := exec.Command(aws, append(args, "--endpoint-url", endpoint, "--region", region, "--output", "json")...)
		cmd.Env = append(os.Environ(), "AWS_PAGER=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		var v map[string]any
		require.NoError(t, json.Unmarshal(out, &v), "%s", out)
		return v
	}
	listed := run("dynamodb", "list-tables", "--exclusive-start-table-name", cfg.Families[0].Prefix)
	var names []string
	for _, n := range listed["TableNames"].([]any) {
		names = append(names, n.(string))
	}
	require.True(t, slices.Contains(names, name), "%v", names)

	got := run("dynamodb", "query", "--table-name", name,
		"--key-condition-expression", "pk = :pk AND sk BETWEEN :from AND :to",
		"--expression-attribute-values", `{":pk":{"S":"acme#cars#car-17#0"},":from":{"S":"2017-04-10T12:00"},":to":{"S":"2017-04-10T13:00"}}`)
	items := got["Items"].([]any)
	require.Len(t, items, 1)
	require.Equal(t, map[string]any{
		"pk":     map[string]any{"S": "acme#cars#car-17#0"},
		"sk":     map[string]any{"S": "2017-04-10T12:00:00.123456000Z#e1"},
		"speed":  map[string]any{"N": "88.5"},
		"gear":   map[string]any{"S": "D"},
		"moving": map[string]any{"BOOL": true},
		"tags":   map[string]any{"L": []any{map[string]any{"S": "a"}, map[string]any{"N": "1"}}},
		"engine": map[string]any{"M": map[string]any{"temp": map[string]any{"NULL": true}}},
	}, items[0])
}
