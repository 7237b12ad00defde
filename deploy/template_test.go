package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/iampolicy"
	"github.com/timetabledb/timetable/lifecycle"
)

// exampleParams are the template's parameters for one deployment.
var exampleParams = map[string]string{
	"AWS::Region": "eu-west-1", "AWS::AccountId": "111122223333",
	"TablePrefix": "tt_", "MetaTable": "timetable_meta_a",
	"ArchiveBucket": "archives", "ArchivePrefix": "a/",
	"ArchiveKMSKey": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
}

type template struct {
	Transform string `yaml:"Transform"`
	Resources struct {
		Lifecycle struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Handler       string   `yaml:"Handler"`
				Runtime       string   `yaml:"Runtime"`
				Architectures []string `yaml:"Architectures"`
				Environment   struct {
					Variables map[string]any `yaml:"Variables"`
				} `yaml:"Environment"`
				Events map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Schedule string `yaml:"Schedule"`
						Input    string `yaml:"Input"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Lifecycle"`
	} `yaml:"Resources"`
}

func TestTemplate(t *testing.T) {
	data, err := os.ReadFile("template.yaml")
	require.NoError(t, err)
	var tpl template
	require.NoError(t, yaml.Unmarshal(data, &tpl))
	fn := tpl.Resources.Lifecycle
	require.Equal(t, "AWS::Serverless-2016-10-31", tpl.Transform)
	require.Equal(t, "AWS::Serverless::Function", fn.Type)
	require.Equal(t, "provided.al2023", fn.Properties.Runtime)
	require.Equal(t, []string{"arm64"}, fn.Properties.Architectures)
	require.Equal(t, "bootstrap", fn.Properties.Handler)
	require.Contains(t, fn.Properties.Environment.Variables, lifecycle.EnvConfigYAML)

	// Every schedule sends an event the handler accepts.
	ops := map[string]string{}
	for name, ev := range fn.Properties.Events {
		require.Equal(t, "Schedule", ev.Type, name)
		var in lifecycle.LambdaEvent
		require.NoError(t, json.Unmarshal([]byte(ev.Properties.Input), &in), name)
		ops[in.Operation] = ev.Properties.Schedule
	}
	require.Equal(t, map[string]string{
		lifecycle.OpReconcile: "rate(15 minutes)",
		lifecycle.OpCreateNew: "cron(0 23 * * ? *)",
		lifecycle.OpResizeOld: "cron(30 0 * * ? *)",
	}, ops)

	// The statements name only the actions the lifecycle manager uses,
	// each on the resource it needs, and every one on a family table is
	// limited to this deployment's tables by their tag (ABAC).
	statements, err := iampolicy.FunctionPolicies(data, "Lifecycle", exampleParams)
	require.NoError(t, err)
	const (
		prefixARN = "arn:aws:dynamodb:eu-west-1:111122223333:table/tt_*"
		metaARN   = "arn:aws:dynamodb:eu-west-1:111122223333:table/timetable_meta_a"
		objects   = "arn:aws:s3:::archives/a/*"
	)
	want := map[string][]string{
		"dynamodb:ListTables":                              {"*"},
		"dynamodb:CreateTable":                             {prefixARN, metaARN},
		"dynamodb:DescribeTable":                           {prefixARN, prefixARN, metaARN},
		"dynamodb:ListTagsOfResource":                      {prefixARN, prefixARN},
		"dynamodb:DescribeTimeToLive":                      {prefixARN, prefixARN},
		"dynamodb:DescribeContinuousBackups":               {prefixARN, metaARN},
		"dynamodb:Scan":                                    {prefixARN},
		"dynamodb:BatchWriteItem":                          {prefixARN},
		"dynamodb:Query":                                   {metaARN},
		"dynamodb:UpdateTable":                             {prefixARN},
		"dynamodb:DeleteTable":                             {prefixARN},
		"dynamodb:UpdateTimeToLive":                        {prefixARN},
		"dynamodb:UpdateContinuousBackups":                 {prefixARN, metaARN},
		"dynamodb:TagResource":                             {prefixARN, prefixARN, metaARN},
		"dynamodb:GetItem":                                 {metaARN},
		"dynamodb:UpdateItem":                              {metaARN},
		"dynamodb:ExportTableToPointInTime":                {prefixARN},
		"dynamodb:DescribeExport":                          {"arn:aws:dynamodb:eu-west-1:111122223333:table/tt_*/export/*"},
		"application-autoscaling:RegisterScalableTarget":   {"*"},
		"application-autoscaling:DeregisterScalableTarget": {"*"},
		"application-autoscaling:PutScalingPolicy":         {"*"},
		"cloudwatch:PutMetricAlarm":                        {"arn:aws:cloudwatch:eu-west-1:111122223333:alarm:TargetTracking-table/tt_*"},
		"cloudwatch:DescribeAlarms":                        {"arn:aws:cloudwatch:eu-west-1:111122223333:alarm:TargetTracking-table/tt_*"},
		"cloudwatch:DeleteAlarms":                          {"arn:aws:cloudwatch:eu-west-1:111122223333:alarm:TargetTracking-table/tt_*"},
		"iam:CreateServiceLinkedRole":                      {"arn:aws:iam::111122223333:role/aws-service-role/dynamodb.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_DynamoDBTable"},
		"s3:PutObject":                                     {objects},
		"s3:GetObject":                                     {objects},
		"s3:DeleteObject":                                  {objects},
		"s3:AbortMultipartUpload":                          {objects},
		"s3:PutObjectAcl":                                  {objects},
		"s3:ListBucket":                                    {"arn:aws:s3:::archives"},
		"kms:GenerateDataKey":                              {exampleParams["ArchiveKMSKey"]},
		"kms:Decrypt":                                      {exampleParams["ArchiveKMSKey"]},
	}
	got := map[string][]string{}
	var allows []iampolicy.Statement
	for _, s := range statements {
		if s.Effect == iampolicy.Deny {
			continue
		}
		require.Equal(t, iampolicy.Allow, s.Effect, s.Sid)
		allows = append(allows, s)
		require.Empty(t, s.NotAction, s.Sid)
		require.Empty(t, s.NotResource, s.Sid)
		require.Len(t, s.Resource, 1, s.Sid)
		for _, a := range s.Action {
			got[a] = append(got[a], s.Resource[0])
		}
	}
	for a := range got {
		sort.Strings(got[a])
	}
	for a := range want {
		sort.Strings(want[a])
	}
	require.Equal(t, want, got, "actions granted, on their resources")

	// Every permission on a family table asks for this deployment's tag:
	// on the table (aws:ResourceTag), or in the request that makes it
	// (aws:RequestTag); and a tag request keeps the table in this
	// deployment and to timetable's keys.
	for _, s := range allows {
		if s.Resource[0] != prefixARN {
			continue
		}
		own := s.Condition["StringEquals"]["aws:ResourceTag/"+family.TagMeta]
		requested := s.Condition["StringEquals"]["aws:RequestTag/"+family.TagMeta]
		untagged := s.Condition["Null"]["aws:ResourceTag/"+family.TagMeta]
		switch {
		case slices.Equal(own, []string{"timetable_meta_a"}):
		case slices.Equal(untagged, []string{"true"}) && len(requested) == 0:
			// Only reads of a table no deployment's tag claims.
			for _, a := range s.Action {
				require.Contains(t, []string{"dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:DescribeTimeToLive"}, a, s.Sid)
			}
		case slices.Equal(requested, []string{"timetable_meta_a"}):
			require.True(t, slices.Equal(untagged, []string{"true"}) || slices.Equal(s.Action, []string{"dynamodb:CreateTable"}),
				"%s: a request's tag only for a table with none", s.Sid)
		default:
			t.Fatalf("statement %s on the family tables without this deployment's tag: %v", s.Sid, s.Condition)
		}
		if slices.Contains(s.Action, "dynamodb:TagResource") || slices.Contains(s.Action, "dynamodb:CreateTable") {
			require.Equal(t, []string{"timetable:*"}, s.Condition["ForAllValues:StringLike"]["aws:TagKeys"], s.Sid)
			if len(requested) == 0 {
				require.Equal(t, []string{"timetable_meta_a"}, s.Condition["StringEqualsIfExists"]["aws:RequestTag/"+family.TagMeta], s.Sid)
			}
		}
	}

	// The explicit denies hold whatever else the role is granted: nothing
	// on another deployment's table, no tag request that takes a table's
	// deployment tag away or names another.
	const table = "arn:aws:dynamodb:eu-west-1:111122223333:table/tt_x_2017"
	others := map[string][]string{"aws:ResourceTag/timetable:meta": {"timetable_meta_b"}}
	for _, c := range []struct {
		r    iampolicy.Request
		want iampolicy.Decision
	}{
		{iampolicy.Request{Action: "dynamodb:DeleteTable", Resource: table, Context: others}, iampolicy.ExplicitDeny},
		{iampolicy.Request{Action: "dynamodb:PutItem", Resource: table, Context: others}, iampolicy.ExplicitDeny},
		{iampolicy.Request{Action: "dynamodb:DescribeTable", Resource: table, Context: others}, iampolicy.ExplicitDeny},
		{iampolicy.Request{Action: "dynamodb:UntagResource", Resource: table, Context: map[string][]string{
			"aws:ResourceTag/timetable:meta": {"timetable_meta_a"}, "aws:TagKeys": {"timetable:meta"}}}, iampolicy.ExplicitDeny},
		{iampolicy.Request{Action: "dynamodb:TagResource", Resource: table, Context: map[string][]string{
			"aws:RequestTag/timetable:meta": {"timetable_meta_b"}, "aws:TagKeys": {"timetable:meta"}}}, iampolicy.ExplicitDeny},
		{iampolicy.Request{Action: "dynamodb:TagResource", Resource: table, Context: map[string][]string{
			"aws:RequestTag/timetable:meta": {"timetable_meta_a"}, "aws:TagKeys": {"timetable:meta"}}}, iampolicy.Allowed},
		{iampolicy.Request{Action: "dynamodb:TagResource", Resource: table, Context: map[string][]string{
			"aws:ResourceTag/timetable:meta": {"timetable_meta_a"}, "aws:RequestTag/timetable:tier": {"warm"}, "aws:TagKeys": {"timetable:tier"}}}, iampolicy.Allowed},
		{iampolicy.Request{Action: "dynamodb:DeleteTable", Resource: table, Context: map[string][]string{
			"aws:ResourceTag/timetable:meta": {"timetable_meta_a"}}}, iampolicy.Allowed},
	} {
		got, _, err := iampolicy.Evaluate(statements, c.r)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%+v", c.r)
	}

	// Without an archive bucket or key, their statements are gone.
	bare := maps.Clone(exampleParams)
	bare["ArchiveBucket"], bare["ArchiveKMSKey"] = "", ""
	statements, err = iampolicy.FunctionPolicies(data, "Lifecycle", bare)
	require.NoError(t, err)
	for _, s := range statements {
		for _, a := range s.Action {
			require.False(t, strings.HasPrefix(a, "s3:") || strings.HasPrefix(a, "kms:") || a == "dynamodb:ExportTableToPointInTime", "%s granted without a bucket", a)
		}
	}

	// Failures go to a queue, and alarms watch the function and it.
	var res struct {
		Resources map[string]struct {
			Type       string         `yaml:"Type"`
			Properties map[string]any `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	require.NoError(t, yaml.Unmarshal(data, &res))
	require.Equal(t, "AWS::SQS::Queue", res.Resources["FailedInvocations"].Type)
	require.Contains(t, res.Resources["Lifecycle"].Properties, "EventInvokeConfig")
	alarms := map[string]bool{}
	for _, r := range res.Resources {
		if r.Type == "AWS::CloudWatch::Alarm" {
			alarms[r.Properties["Namespace"].(string)+" "+r.Properties["MetricName"].(string)] = true
		}
	}
	require.Equal(t, map[string]bool{
		"AWS/Lambda Errors": true, "AWS/SQS ApproximateNumberOfMessagesVisible": true,
		"timetable Runs": true, "AWS/Lambda Duration": true, "AWS/Lambda Throttles": true,
		"timetable TableQuotaUsed": true, "AWS/DynamoDB AccountProvisionedWriteCapacityUtilization": true,
	}, alarms)

	// A missing run is an alarm: no heartbeat (the function's metric
	// Runs, cmd/timetable-lambda's TestHeartbeat) is no metric, which
	// breaches. A run near the timeout alarms before the timeout.
	heartbeat := res.Resources["MissingRunAlarm"].Properties
	require.Equal(t, "Runs", heartbeat["MetricName"])
	require.Equal(t, "breaching", heartbeat["TreatMissingData"])
	require.Equal(t, "LessThanThreshold", heartbeat["ComparisonOperator"])
	fnProps := res.Resources["Lifecycle"].Properties
	timeout := fnProps["Timeout"].(int)
	threshold := res.Resources["DurationAlarm"].Properties["Threshold"].(int)
	require.Less(t, threshold, timeout*1000)
	require.GreaterOrEqual(t, threshold, timeout*1000*8/10)

	// One invocation at a time, stale events dropped, logs kept a while.
	require.Equal(t, 1, fnProps["ReservedConcurrentExecutions"])
	invoke := fnProps["EventInvokeConfig"].(map[string]any)
	require.Equal(t, 900, invoke["MaximumEventAgeInSeconds"])
	require.Equal(t, "AWS::Logs::LogGroup", res.Resources["LifecycleLogs"].Type)
	require.Equal(t, map[string]any{"Ref": "LogRetentionDays"}, res.Resources["LifecycleLogs"].Properties["RetentionInDays"])
	require.Equal(t, map[string]any{"LogGroup": map[string]any{"Ref": "LifecycleLogs"}}, fnProps["LoggingConfig"])

	// The spool's bound in the comment is the archiver's.
	require.Contains(t, string(data), fmt.Sprintf("at most %s events,\n      # archive.DefaultParquetPartRows", thousands(archive.DefaultParquetPartRows)))
}

// thousands spells n with commas, as the template's comments do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestPermissionsTable: docs/operations.md's Permissions table names
// every action the template grants (with an archive bucket and key), and
// none it does not, each row with its resource, the call that needs it
// and the condition that limits it.
func TestPermissionsTable(t *testing.T) {
	data, err := os.ReadFile("template.yaml")
	require.NoError(t, err)
	statements, err := iampolicy.FunctionPolicies(data, "Lifecycle", exampleParams)
	require.NoError(t, err)
	granted := map[string]bool{}
	for _, s := range statements {
		if s.Effect != iampolicy.Allow {
			continue
		}
		for _, a := range s.Action {
			granted[a] = true
		}
	}

	doc, err := os.ReadFile("../docs/operations.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "\n### Permissions\n")
	require.True(t, ok, "operations.md has a Permissions section")
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		require.Len(t, cells, 4, "a row: permission, resource, call, condition: %s", line)
		for _, c := range cells {
			require.NotEmpty(t, strings.TrimSpace(c), line)
		}
		for _, field := range strings.Split(cells[0], "`") {
			if strings.Contains(field, ":") {
				listed[field] = true
			}
		}
		rows++
	}
	require.Positive(t, rows)
	require.Equal(t, slices.Sorted(maps.Keys(granted)), slices.Sorted(maps.Keys(listed)), "the table's permissions are the template's")
}
