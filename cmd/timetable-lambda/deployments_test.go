package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/iampolicy"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// The account and region the recorded calls are addressed in, whatever
// the local servers put in their ARNs.
const (
	testRegion  = "eu-west-1"
	testAccount = "111122223333"
)

// apiCall is one authorization AWS makes for a call: the action, the
// resource, and the context keys of the resource's tags at the time of
// the call and of the tags the request carries.
type apiCall struct {
	action, resource string
	// table is the family or meta table the call is on, "" for none.
	table       string
	resourceTag map[string]string
	requestTag  map[string]string
	tagKeys     []string
	context     map[string][]string
}

// request returns the call as the evaluator's request.
func (c apiCall) request() iampolicy.Request {
	ctx := map[string][]string{}
	maps.Copy(ctx, c.context)
	for k, v := range c.resourceTag {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	for k, v := range c.requestTag {
		ctx["aws:RequestTag/"+k] = []string{v}
	}
	if c.tagKeys != nil {
		ctx["aws:TagKeys"] = c.tagKeys
	}
	return iampolicy.Request{Action: c.action, Resource: c.resource, Context: ctx}
}

func (c apiCall) String() string {
	return fmt.Sprintf("%s on %s (tags %v, request tags %v, %v)", c.action, c.resource, c.resourceTag, c.requestTag, c.context)
}

func tableARN(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", testRegion, testAccount, name)
}

// tagWorld is what DynamoDB in AWS would hold of every table's tags: the
// tags of the CreateTable and TagResource requests that succeeded, on
// any local server (DynamoDB Local keeps none). ever keeps the tags of
// deleted tables too.
type tagWorld struct {
	mu   sync.Mutex
	live map[string]map[string]string
	ever map[string]map[string]string
}

func (w *tagWorld) tags(name string) (map[string]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.live[name]
	return maps.Clone(t), ok
}

func (w *tagWorld) set(name string, tags map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live[name] == nil {
		w.live[name] = map[string]string{}
	}
	maps.Copy(w.live[name], tags)
	w.ever[name] = maps.Clone(w.live[name])
}

func (w *tagWorld) untag(name string, keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		delete(w.live[name], k)
	}
	w.ever[name] = maps.Clone(w.live[name])
}

func (w *tagWorld) drop(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.live, name)
}

// deploymentCalls records the calls of one deployment.
type deploymentCalls struct {
	mu    sync.Mutex
	calls []apiCall
}

func (d *deploymentCalls) add(c apiCall) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, c)
}

func (d *deploymentCalls) all() []apiCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]apiCall(nil), d.calls...)
}

// dynamoRecorder records each DynamoDB request's authorization, with the
// tags of its table before the call, and keeps the world's tags.
type dynamoRecorder struct {
	world *tagWorld
	calls *deploymentCalls
	next  http.RoundTripper
}

// arnTable returns the table name of a table, export or index ARN.
func arnTable(arn string) string {
	_, rest, ok := strings.Cut(arn, ":table/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

func (d dynamoRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in struct {
		TableName, ResourceArn, TableArn, ExportArn string
		Tags                                        []struct{ Key, Value string }
		TagKeys                                     []string
		RequestItems                                map[string]json.RawMessage
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("record %s: %w", op, err)
	}
	tables := []string{in.TableName + arnTable(in.ResourceArn) + arnTable(in.TableArn)}
	if in.RequestItems != nil {
		tables = tables[:0]
		for name := range in.RequestItems {
			tables = append(tables, name)
		}
	}
	requested := map[string]string{}
	var keys []string
	for _, t := range in.Tags {
		requested[t.Key] = t.Value
		keys = append(keys, t.Key)
	}
	if op == "UntagResource" {
		keys = in.TagKeys
	}
	for _, name := range tables {
		c := apiCall{action: "dynamodb:" + op, table: name, resource: tableARN(name)}
		switch {
		case op == "ListTables":
			c.resource, c.table = "*", ""
		case op == "DescribeExport":
			_, id, _ := strings.Cut(in.ExportArn, "/export/")
			c.table, c.resource = arnTable(in.ExportArn), tableARN(arnTable(in.ExportArn))+"/export/"+id
		}
		if op != "CreateTable" && c.table != "" {
			c.resourceTag, _ = d.world.tags(c.table)
		}
		if op == "CreateTable" || op == "TagResource" || op == "UntagResource" {
			c.tagKeys = keys
			if op != "UntagResource" {
				c.requestTag = requested
			}
		}
		d.calls.add(c)
		if op == "CreateTable" && len(requested) > 0 {
			// Creating a table with tags is authorized as tagging it too,
			// a table that has no tags yet.
			d.calls.add(apiCall{action: "dynamodb:TagResource", table: c.table, resource: c.resource, requestTag: requested, tagKeys: keys})
		}
	}
	res, err := d.next.RoundTrip(r)
	if err != nil || res.StatusCode != http.StatusOK {
		return res, err
	}
	switch name := tables[0]; op {
	case "CreateTable":
		d.world.set(name, requested)
	case "TagResource":
		d.world.set(name, requested)
	case "UntagResource":
		d.world.untag(name, in.TagKeys)
	case "DeleteTable":
		d.world.drop(name)
	}
	return res, nil
}

// autoScalingRecorder records the Application Auto Scaling calls, and
// the CloudWatch calls target tracking makes in the caller's name for
// them ("Permissions required for API actions on target services and
// CloudWatch"), and makes them on a fake, as no local server has the
// service.
type autoScalingRecorder struct {
	calls *deploymentCalls
	*dynamofault.AutoScaling
}

func (a autoScalingRecorder) alarms(resourceID string, actions ...string) {
	table := strings.TrimPrefix(resourceID, "table/")
	for _, act := range actions {
		a.calls.add(apiCall{action: act, table: table,
			resource: fmt.Sprintf("arn:aws:cloudwatch:%s:%s:alarm:TargetTracking-%s-AlarmHigh-0e4c", testRegion, testAccount, resourceID)})
	}
}

func (a autoScalingRecorder) RegisterScalableTarget(ctx context.Context, in *aas.RegisterScalableTargetInput, o ...func(*aas.Options)) (*aas.RegisterScalableTargetOutput, error) {
	a.calls.add(apiCall{action: "application-autoscaling:RegisterScalableTarget", resource: "*", table: strings.TrimPrefix(*in.ResourceId, "table/")})
	// Application Auto Scaling makes its service-linked role on first
	// use, in the caller's name.
	a.calls.add(apiCall{action: "iam:CreateServiceLinkedRole",
		resource: "arn:aws:iam::" + testAccount + ":role/aws-service-role/dynamodb.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_DynamoDBTable",
		context:  map[string][]string{"iam:AWSServiceName": {"dynamodb.application-autoscaling.amazonaws.com"}}})
	return a.AutoScaling.RegisterScalableTarget(ctx, in, o...)
}

func (a autoScalingRecorder) PutScalingPolicy(ctx context.Context, in *aas.PutScalingPolicyInput, o ...func(*aas.Options)) (*aas.PutScalingPolicyOutput, error) {
	a.calls.add(apiCall{action: "application-autoscaling:PutScalingPolicy", resource: "*", table: strings.TrimPrefix(*in.ResourceId, "table/")})
	a.alarms(*in.ResourceId, "cloudwatch:DescribeAlarms", "cloudwatch:PutMetricAlarm")
	return a.AutoScaling.PutScalingPolicy(ctx, in, o...)
}

func (a autoScalingRecorder) DeregisterScalableTarget(ctx context.Context, in *aas.DeregisterScalableTargetInput, o ...func(*aas.Options)) (*aas.DeregisterScalableTargetOutput, error) {
	a.calls.add(apiCall{action: "application-autoscaling:DeregisterScalableTarget", resource: "*", table: strings.TrimPrefix(*in.ResourceId, "table/")})
	a.alarms(*in.ResourceId, "cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms")
	return a.AutoScaling.DeregisterScalableTarget(ctx, in, o...)
}

// s3Recorder records each S3 request's authorization on the bucket
// (path style) to the deployment whose turn it is: the two share one S3
// server, as AWS_ENDPOINT_URL_S3 is the process's.
type s3Recorder struct {
	mu      sync.Mutex
	current *deploymentCalls
	next    http.Handler
}

func (s *s3Recorder) turn(d *deploymentCalls) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = d
}

func (s *s3Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	calls := s.current
	s.mu.Unlock()
	bucket, key, object := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	object = object && key != ""
	q := r.URL.Query()
	rec := &statusRecorder{ResponseWriter: w}
	s.next.ServeHTTP(rec, r)
	add := func(action, resource string, ctx map[string][]string) {
		calls.add(apiCall{action: action, resource: resource, context: ctx})
	}
	objectARN := "arn:aws:s3:::" + bucket + "/" + key
	switch {
	case !object && r.Method == http.MethodGet:
		add("s3:ListBucket", "arn:aws:s3:::"+bucket, map[string][]string{"s3:prefix": {q.Get("prefix")}})
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		add("s3:AbortMultipartUpload", objectARN, nil)
	case r.Method == http.MethodPut || r.Method == http.MethodPost:
		add("s3:PutObject", objectARN, nil)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		add("s3:GetObject", objectARN, nil)
		if rec.status == http.StatusNotFound {
			// S3 answers 404 rather than 403 only to a caller that may
			// list the bucket.
			add("s3:ListBucket", "arn:aws:s3:::"+bucket, map[string][]string{"s3:prefix": {key}})
		}
	case r.Method == http.MethodDelete:
		add("s3:DeleteObject", objectARN, nil)
	default:
		add("s3:unknown "+r.Method, objectARN, nil)
	}
}

// deployment is one deployment of the template: its family prefix, its
// meta table, its archive prefix, and what it called.
type deployment struct {
	name, prefix, meta, archivePrefix string
	calls                             *deploymentCalls
	policy                            []iampolicy.Statement
	reconciler                        *lifecycle.Reconciler
	oldTable                          string
}

// TestTemplateKeepsDeploymentsApart runs the lifecycles of two
// deployments of deploy/template.yaml in one account, sharing the
// template's TablePrefix and archive bucket — each with its own meta
// table, family prefix and archive prefix — over their tables' whole
// lives (created, tiered, auto scaled, archived by export, deleted),
// records every DynamoDB, S3, Application Auto Scaling (and the
// CloudWatch and IAM calls it makes in the caller's name) call with the
// tags of its table at the time, and evaluates deploy/template.yaml's
// statements for each deployment (package iampolicy): every call of a
// deployment is allowed to it, and the same call addressed to the other
// deployment's table, meta table or archive is denied to it — but for
// the calls no table tag can limit, which are listed with the reason.
func TestTemplateKeepsDeploymentsApart(t *testing.T) {
	if os.Getenv(backends.EndpointEnv) == "" {
		t.Skipf("set %s or run `make test` to start dynalite", backends.EndpointEnv)
	}
	ctx := context.Background()
	setup, cfg := backends.Dynamo().Open(t)
	// The template's TablePrefix, shared; each deployment's family has its
	// own prefix under it, as it must not share table names.
	tablePrefix := strings.TrimSuffix(cfg.Families[0].Prefix, "ev_")
	template, err := os.ReadFile("../../deploy/template.yaml")
	require.NoError(t, err)

	world := &tagWorld{live: map[string]map[string]string{}, ever: map[string]map[string]string{}}
	mem := s3mem.New()
	require.NoError(t, mem.CreateBucket("archives"))
	s3rec := &s3Recorder{next: gofakes3.New(mem).Server()}
	s3srv := httptest.NewServer(s3rec)
	defer s3srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", s3srv.URL)
	clk := clock.NewManual(time.Date(2017, 5, 10, 12, 0, 0, 0, time.UTC))

	var deps []*deployment
	for _, name := range []string{"a", "b"} {
		d := &deployment{name: name, prefix: tablePrefix + name + "_", meta: cfg.MetaTable + "_" + name,
			archivePrefix: name + "/", calls: &deploymentCalls{}}
		d.policy, err = iampolicy.FunctionPolicies(template, "Lifecycle", map[string]string{
			"AWS::Region": testRegion, "AWS::AccountId": testAccount,
			"TablePrefix": tablePrefix, "MetaTable": d.meta, "ArchiveBucket": "archives", "ArchivePrefix": d.archivePrefix,
		})
		require.NoError(t, err)

		// The meta table, as a server of the deployment made it, and an
		// old table the deployment made, to be archived and deleted.
		metaSpec := metatable.Spec(d.meta)
		require.NoError(t, setup.CreateTable(ctx, metaSpec))
		world.set(d.meta, metaSpec.Tags)
		f := cfg.Families[0]
		f.Prefix = d.prefix
		old := time.Date(2017, 3, 6, 0, 0, 0, 0, time.UTC)
		spec := f.Spec(f.TableFor(old, old), f.Tiers[0])
		spec.Tags[family.TagMeta] = d.meta
		require.NoError(t, setup.CreateTable(ctx, spec))
		world.set(spec.Name, spec.Tags)
		backends.AdoptUntagged(t, setup, d.meta, f, spec.Name, old)
		require.NoError(t, setup.BatchWrite(ctx, spec.Name, []storage.Item{{PK: "acme#t#s#0", SK: "2017-03-06T00:00:00Z", Attrs: map[string]any{"v": "x"}}}))
		d.oldTable = spec.Name

		yamlConfig := fmt.Sprintf(`meta_table: %s
families:
  - name: events
    prefix: %s
    retention: 672h
    ttl: 720h
    archive: s3://archives/%stimetable
    tiers:
      - {name: hot, age: 0, billing: provisioned, read: 5, write: 10, max_read: 300, max_write: 1000}
      - {name: warm, age: 1 period}
      - {name: cold, age: 2 periods, class: infrequent_access}
`, d.meta, d.prefix, d.archivePrefix)
		env := map[string]string{lifecycle.EnvConfigYAML: yamlConfig}
		calls := d.calls
		d.reconciler, _, err = newReconciler(ctx, wiring{
			getenv: func(k string) string { return env[k] },
			logger: slog.New(slog.DiscardHandler),
			clock:  clk,
			store: dynamostore.Options{AutoScaling: autoScalingRecorder{calls, dynamofault.NewAutoScaling()},
				ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
					o.HTTPClient = &http.Client{Transport: dynamoRecorder{world: world, calls: calls,
						next: dynamofault.NewControlPlane(dynamofault.ControlPlaneOptions{Now: clk.Now, Exports: true})}}
				}}},
			s3: archive.S3Options{UsePathStyle: true},
		})
		require.NoError(t, err)
		deps = append(deps, d)
	}

	// The two take turns, cycle by cycle, as two schedules would.
	invoke := func(op string) {
		t.Helper()
		for _, d := range deps {
			s3rec.turn(d.calls)
			_, err := lifecycle.HandleLambda(ctx, d.reconciler, lifecycle.LambdaEvent{Operation: op})
			require.NoError(t, err, "deployment %s", d.name)
		}
	}
	for range 4 {
		invoke(lifecycle.OpReconcile)
		clk.Advance(registry.DefaultFenceSettle)
	}
	for _, d := range deps {
		_, err := setup.DescribeTable(ctx, d.oldTable)
		require.ErrorIs(t, err, storage.ErrTableNotFound, "deployment %s archived and deleted its old table", d.name)
	}
	for range 3 { // the tiers age
		clk.Advance(7 * 24 * time.Hour)
		invoke(lifecycle.OpReconcile)
	}

	// The calls the template's tags cannot limit, and why (the
	// Permissions table of docs/operations.md says so too).
	unlimited := map[string]string{
		"dynamodb:ListTables":                              "lists every table; it takes no resource",
		"dynamodb:CreateTable":                             "makes only a table of a name that does not exist, tagged as the caller's",
		"dynamodb:DescribeExport":                          "an export is no taggable resource; the call reads its status",
		"application-autoscaling:RegisterScalableTarget":   "Application Auto Scaling takes no table resource",
		"application-autoscaling:PutScalingPolicy":         "Application Auto Scaling takes no table resource",
		"application-autoscaling:DeregisterScalableTarget": "Application Auto Scaling takes no table resource",
		"cloudwatch:PutMetricAlarm":                        "target tracking's alarms are named by table, under the prefix",
		"cloudwatch:DescribeAlarms":                        "target tracking's alarms are named by table, under the prefix",
		"cloudwatch:DeleteAlarms":                          "target tracking's alarms are named by table, under the prefix",
		"iam:CreateServiceLinkedRole":                      "one role for the account",
	}

	for i, d := range deps {
		other := deps[1-i]
		calls := d.calls.all()
		actions := map[string]bool{}
		for _, c := range calls {
			actions[c.action] = true
			got, _, err := iampolicy.Evaluate(d.policy, c.request())
			require.NoError(t, err)
			if got != iampolicy.Allowed {
				for _, c := range calls {
					t.Log(c)
				}
			}
			require.Equal(t, iampolicy.Allowed, got, "deployment %s: its own call %s", d.name, c)
		}
		// The run did what the test is about: made, tagged, changed,
		// archived and deleted tables, and wrote archives.
		for _, a := range []string{"dynamodb:CreateTable", "dynamodb:TagResource", "dynamodb:UpdateTable", "dynamodb:DeleteTable",
			"dynamodb:Scan", "dynamodb:ExportTableToPointInTime", "dynamodb:UpdateItem", "s3:PutObject",
			"application-autoscaling:RegisterScalableTarget"} {
			require.True(t, actions[a], "deployment %s made no %s", d.name, a)
		}

		// The same calls, on the other's: denied.
		otherTags := world.ever[other.oldTable]
		require.Equal(t, other.meta, otherTags[family.TagMeta])
		denied, logged := 0, map[string]bool{}
		for _, c := range calls {
			if why, ok := unlimited[c.action]; ok {
				if !logged[c.action] {
					t.Logf("deployment %s: %s is not limited to its own: %s", d.name, c.action, why)
					logged[c.action] = true
				}
				continue
			}
			o, ok := readdress(c, d, other, world)
			require.True(t, ok, "deployment %s: a call on no resource of its own: %s", d.name, c)
			got, s, err := iampolicy.Evaluate(d.policy, o.request())
			require.NoError(t, err)
			require.NotEqual(t, iampolicy.Allowed, got, "deployment %s: %s is allowed on the other's by %+v", d.name, o, s)
			denied++
		}
		require.Positive(t, denied)
	}
}

// readdress returns call c of deployment d addressed to the other
// deployment's table (of the same name under its prefix, with the tags
// it had), meta table or archive prefix.
func readdress(c apiCall, d, other *deployment, world *tagWorld) (apiCall, bool) {
	o := c
	o.context = maps.Clone(c.context)
	o.requestTag = maps.Clone(c.requestTag)
	switch {
	case c.table == d.meta:
		o.table = other.meta
		o.resource = strings.Replace(c.resource, "table/"+d.meta, "table/"+other.meta, 1)
		world.mu.Lock()
		o.resourceTag = maps.Clone(world.ever[other.meta])
		world.mu.Unlock()
	case strings.HasPrefix(c.table, d.prefix):
		o.table = other.prefix + strings.TrimPrefix(c.table, d.prefix)
		o.resource = strings.Replace(c.resource, "table/"+c.table, "table/"+o.table, 1)
		world.mu.Lock()
		tags, ok := world.ever[o.table]
		if !ok {
			tags = world.ever[other.oldTable]
		}
		world.mu.Unlock()
		// A call on a table of its own not yet tagged (the tags of a
		// CreateTable) is readdressed to the other's table, tagged.
		o.resourceTag = maps.Clone(tags)
	case strings.HasPrefix(c.resource, "arn:aws:s3:::archives/"+d.archivePrefix):
		o.resource = strings.Replace(c.resource, "archives/"+d.archivePrefix, "archives/"+other.archivePrefix, 1)
	case c.action == "s3:ListBucket":
		for i, p := range o.context["s3:prefix"] {
			if !strings.HasPrefix(p, d.archivePrefix) {
				return o, false
			}
			o.context["s3:prefix"] = append([]string(nil), o.context["s3:prefix"]...)
			o.context["s3:prefix"][i] = other.archivePrefix + strings.TrimPrefix(p, d.archivePrefix)
		}
	default:
		return o, false
	}
	return o, true
}
