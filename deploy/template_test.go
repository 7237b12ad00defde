package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/lifecycle"
)

type statement struct {
	Sid       string                    `yaml:"Sid"`
	Effect    string                    `yaml:"Effect"`
	Action    []string                  `yaml:"Action"`
	Resource  any                       `yaml:"Resource"`
	Condition map[string]map[string]any `yaml:"Condition"`
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
				Policies []yaml.Node `yaml:"Policies"`
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
	// each on the resource it needs.
	var statements []statement
	for _, p := range fn.Properties.Policies {
		var policy struct {
			Statement []statement `yaml:"Statement"`
			If        []yaml.Node `yaml:"Fn::If"`
		}
		require.NoError(t, p.Decode(&policy))
		statements = append(statements, policy.Statement...)
		if len(policy.If) > 0 {
			require.Len(t, policy.If, 3)
			var archive struct {
				Statement []statement `yaml:"Statement"`
			}
			require.NoError(t, policy.If[1].Decode(&archive))
			statements = append(statements, archive.Statement...)
		}
	}
	prefixARN := map[string]any{"Fn::Sub": "arn:aws:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${TablePrefix}*"}
	metaARN := map[string]any{"Fn::Sub": "arn:aws:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${MetaTable}"}
	want := map[string][]any{
		"dynamodb:UpdateTable":                             []any{prefixARN},
		"dynamodb:DeleteTable":                             []any{prefixARN},
		"dynamodb:UpdateContinuousBackups":                 []any{prefixARN, metaARN},
		"dynamodb:DescribeContinuousBackups":               []any{prefixARN},
		"dynamodb:ListTagsOfResource":                      []any{prefixARN},
		"dynamodb:UpdateTimeToLive":                        []any{prefixARN},
		"dynamodb:DescribeTimeToLive":                      []any{prefixARN},
		"dynamodb:Scan":                                    []any{prefixARN},
		"dynamodb:ListTables":                              []any{"*"},
		"application-autoscaling:RegisterScalableTarget":   []any{"*"},
		"application-autoscaling:DeregisterScalableTarget": []any{"*"},
		"application-autoscaling:PutScalingPolicy":         []any{"*"},
		"iam:CreateServiceLinkedRole":                      []any{map[string]any{"Fn::Sub": "arn:aws:iam::${AWS::AccountId}:role/aws-service-role/dynamodb.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_DynamoDBTable"}},
		"dynamodb:GetItem":                                 []any{metaARN},
		"dynamodb:UpdateItem":                              []any{metaARN},
		"dynamodb:Query":                                   []any{prefixARN, metaARN},
		"dynamodb:CreateTable":                             []any{prefixARN, metaARN},
		"dynamodb:DescribeTable":                           []any{prefixARN, metaARN},
		"dynamodb:TagResource":                             []any{prefixARN, metaARN},
		"s3:PutObject":                                     []any{map[string]any{"Fn::Sub": "arn:aws:s3:::${ArchiveBucket}/${ArchivePrefix}*"}},
		"s3:GetObject":                                     []any{map[string]any{"Fn::Sub": "arn:aws:s3:::${ArchiveBucket}/${ArchivePrefix}*"}},
		"s3:DeleteObject":                                  []any{map[string]any{"Fn::Sub": "arn:aws:s3:::${ArchiveBucket}/${ArchivePrefix}*"}},
		"s3:AbortMultipartUpload":                          []any{map[string]any{"Fn::Sub": "arn:aws:s3:::${ArchiveBucket}/${ArchivePrefix}*"}},
		"s3:PutObjectAcl":                                  []any{map[string]any{"Fn::Sub": "arn:aws:s3:::${ArchiveBucket}/${ArchivePrefix}*"}},
		"dynamodb:ExportTableToPointInTime":                []any{prefixARN},
		"dynamodb:DescribeExport":                          []any{map[string]any{"Fn::Sub": "arn:aws:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${TablePrefix}*/export/*"}},
		"s3:ListBucket":                                    []any{map[string]any{"Fn::Sub": "arn:aws:s3:::${ArchiveBucket}"}},
	}
	// An action may be granted on several resources, by several
	// statements: the family's tables and the meta table.
	got := map[string][]any{}
	for _, s := range statements {
		require.Equal(t, "Allow", s.Effect, s.Sid)
		for _, a := range s.Action {
			require.NotContains(t, got[a], s.Resource, "%s granted twice on one resource", a)
			got[a] = append(got[a], s.Resource)
		}
	}
	names := func(m map[string][]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	require.Equal(t, names(want), names(got), "actions granted")
	require.Equal(t, want, got, "resources of each action")

	// Changes and deletions need the table's family tag besides its
	// prefix (ABAC), and S3 listing the archive prefix.
	for _, s := range statements {
		res, _ := s.Resource.(map[string]any)
		for _, a := range s.Action {
			switch {
			case res != nil && res["Fn::Sub"] == metaARN["Fn::Sub"]:
				// The meta table is named, not found by its prefix.
			case a == "dynamodb:UpdateTable", a == "dynamodb:DeleteTable", a == "dynamodb:UpdateContinuousBackups":
				require.Equal(t, map[string]map[string]any{"StringLike": {"aws:ResourceTag/timetable:family": "?*"}}, s.Condition, a)
			case a == "s3:ListBucket":
				require.Contains(t, s.Condition["StringLike"], "s3:prefix", a)
			}
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
		"AWS/Lambda Invocations": true, "AWS/Lambda Duration": true, "AWS/Lambda Throttles": true,
	}, alarms)

	// A missing run is an alarm: no invocation is no metric, which
	// breaches. A run near the timeout alarms before the timeout.
	heartbeat := res.Resources["MissingRunAlarm"].Properties
	require.Equal(t, "Invocations", heartbeat["MetricName"])
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
