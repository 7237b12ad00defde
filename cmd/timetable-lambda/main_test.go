package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
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
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/internal/iampolicy"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// calls records the IAM actions the function's requests need.
type calls struct {
	mu      sync.Mutex
	actions map[string]bool
}

func (c *calls) add(action string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actions[action] = true
}

func (c *calls) sorted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for a := range c.actions {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// dynamoCalls records "dynamodb:" + each request's operation.
type dynamoCalls struct {
	*calls
	next http.RoundTripper
}

func (d dynamoCalls) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), "."); ok {
		d.add("dynamodb:" + op)
	}
	return d.next.RoundTrip(r)
}

// autoScalingCalls records each Application Auto Scaling call and makes
// it on a fake, as no local server has the service.
type autoScalingCalls struct {
	calls *calls
	*dynamofault.AutoScaling
}

func (a autoScalingCalls) RegisterScalableTarget(ctx context.Context, in *aas.RegisterScalableTargetInput, o ...func(*aas.Options)) (*aas.RegisterScalableTargetOutput, error) {
	a.calls.add("application-autoscaling:RegisterScalableTarget")
	return a.AutoScaling.RegisterScalableTarget(ctx, in, o...)
}

func (a autoScalingCalls) PutScalingPolicy(ctx context.Context, in *aas.PutScalingPolicyInput, o ...func(*aas.Options)) (*aas.PutScalingPolicyOutput, error) {
	a.calls.add("application-autoscaling:PutScalingPolicy")
	return a.AutoScaling.PutScalingPolicy(ctx, in, o...)
}

func (a autoScalingCalls) DeregisterScalableTarget(ctx context.Context, in *aas.DeregisterScalableTargetInput, o ...func(*aas.Options)) (*aas.DeregisterScalableTargetOutput, error) {
	a.calls.add("application-autoscaling:DeregisterScalableTarget")
	return a.AutoScaling.DeregisterScalableTarget(ctx, in, o...)
}

// s3Calls records the S3 action of each request to the bucket. A GET of
// an object that is not there needs s3:ListBucket too: without it S3
// answers 403, not 404, and the archiver could not tell "no archive yet".
func s3Calls(c *calls, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		object := strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		switch {
		case !object && r.Method == http.MethodGet:
			c.add("s3:ListBucket")
		case r.Method == http.MethodPut:
			c.add("s3:PutObject")
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			c.add("s3:GetObject")
			if rec.status == http.StatusNotFound {
				c.add("s3:ListBucket")
			}
		case r.Method == http.MethodDelete:
			c.add("s3:DeleteObject")
		default:
			c.add("s3:unknown " + r.Method)
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// granted returns every action deploy/template.yaml allows the function,
// with an archive bucket and an SSE-KMS key (its explicit denies grant
// nothing).
func granted(t *testing.T) []string {
	data, err := os.ReadFile("../../deploy/template.yaml")
	require.NoError(t, err)
	statements, err := iampolicy.FunctionPolicies(data, "Lifecycle", map[string]string{
		"AWS::Region": testRegion, "AWS::AccountId": testAccount, "ArchiveBucket": "archives",
		"ArchiveKMSKey": "arn:aws:kms:" + testRegion + ":" + testAccount + ":key/k",
	})
	require.NoError(t, err)
	set := map[string]bool{}
	for _, s := range statements {
		if s.Effect == iampolicy.Allow {
			for _, a := range s.Action {
				set[a] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// TestTemplateGrantsWhatTheFunctionCalls runs the function's code path
// (newReconciler, the handler) against the local DynamoDB server and an
// S3 server in the process, over a table's whole life — the meta table
// made, a table adopted from its tags, tables created with TTL, tiers
// changed, a table archived to S3 by DynamoDB's own export (faked by the
// ControlPlane, as the local servers have none) and deleted — records the AWS calls it
// makes, and requires deploy/template.yaml to grant exactly their
// actions: no call the role would refuse, no grant nothing uses.
func TestTemplateGrantsWhatTheFunctionCalls(t *testing.T) {
	if os.Getenv(backends.EndpointEnv) == "" {
		t.Skipf("set %s or run `make test` to start dynalite", backends.EndpointEnv)
	}
	ctx := context.Background()
	setup, cfg := backends.Dynamo().Open(t)
	prefix := cfg.Families[0].Prefix

	recorded := &calls{actions: map[string]bool{}}
	mem := s3mem.New()
	require.NoError(t, mem.CreateBucket("archives"))
	s3srv := httptest.NewServer(s3Calls(recorded, gofakes3.New(mem).Server()))
	defer s3srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", s3srv.URL)

	// An old table a server made before the registry: adopted from its
	// tags (or its name), archived and deleted.
	f := cfg.Families[0]
	old := time.Date(2017, 3, 6, 0, 0, 0, 0, time.UTC)
	spec := f.Spec(f.TableFor(old, old), f.Tiers[0])
	// Tagged with this deployment's meta table, as the registry tags
	// the tables it makes: the deployment's own, which it adopts.
	spec.Tags[family.TagMeta] = cfg.MetaTable
	require.NoError(t, setup.CreateTable(ctx, spec))
	backends.AdoptUntagged(t, setup, cfg.MetaTable, f, spec.Name, old)
	require.NoError(t, setup.BatchWrite(ctx, spec.Name, []storage.Item{{PK: "acme#t#s#0", SK: "2017-03-06T00:00:00Z", Attrs: map[string]any{"v": "x"}}}))

	yamlConfig := fmt.Sprintf(`meta_table: %s
families:
  - name: events
    prefix: %s
    retention: 672h
    ttl: 720h
    archive: s3://archives/timetable
    tiers:
      - {name: hot, age: 0, billing: provisioned, read: 5, write: 10, max_read: 300, max_write: 1000}
      - {name: warm, age: 1 period}
      - {name: cold, age: 2 periods, class: infrequent_access}
  - name: packed
    prefix: %s
    layout: chunk
    chunk_window: 1h
    tiers:
      - {name: hot, age: 0}
      - {name: warm, age: 1 period}
`, cfg.MetaTable, prefix, strings.TrimSuffix(prefix, "ev_")+"pk_")
	env := map[string]string{lifecycle.EnvConfigYAML: yamlConfig}
	clk := clock.NewManual(time.Date(2017, 5, 10, 12, 0, 0, 0, time.UTC))
	r, _, err := newReconciler(ctx, wiring{
		getenv: func(k string) string { return env[k] },
		logger: slog.New(slog.DiscardHandler),
		clock:  clk,
		// The calls go through a ControlPlane, which answers what the
		// local servers lack, as AWS would.
		store: dynamostore.Options{AutoScaling: autoScalingCalls{recorded, dynamofault.NewAutoScaling()},
			ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
				o.HTTPClient = &http.Client{Transport: dynamoCalls{calls: recorded, next: dynamofault.NewControlPlane(dynamofault.ControlPlaneOptions{Now: clk.Now, Exports: true})}}
			}}},
		s3: archive.S3Options{UsePathStyle: true},
	})
	require.NoError(t, err)

	invoke := func(op string) lifecycle.LambdaResponse {
		t.Helper()
		res, err := lifecycle.HandleLambda(ctx, r, lifecycle.LambdaEvent{Operation: op})
		require.NoError(t, err)
		return res
	}
	// The meta table, adoption and creations; the old table is fenced,
	// and archived and deleted once its writers have had FenceSettle to
	// see the fence.
	for range 4 {
		invoke(lifecycle.OpReconcile)
		clk.Advance(registry.DefaultFenceSettle)
	}
	_, err = setup.DescribeTable(ctx, spec.Name)
	require.ErrorIs(t, err, storage.ErrTableNotFound, "archived and deleted")
	// Rows written one at a time into the packed family's table of the
	// week.
	reg := registry.New(setup, cfg.MetaTable)
	packed := func() registry.Entry {
		es, err := reg.List(ctx, "packed")
		require.NoError(t, err)
		for _, e := range es {
			if e.Ref.Period.Contains(clk.Now()) || e.Physical != "" {
				return e
			}
		}
		t.Fatal("no table of the packed family this week")
		return registry.Entry{}
	}
	week := packed()
	var rows []storage.Item
	for i := range 20 {
		at := clk.Now().Add(time.Duration(i) * time.Minute)
		rows = append(rows, storage.Item{PK: itemenc.PartitionKey("acme", "t", "s", 0), SK: itemenc.SortKey(at, fmt.Sprint("e", i)), Attrs: map[string]any{"v": json.Number(fmt.Sprint(i))}})
	}
	require.NoError(t, setup.BatchWrite(ctx, week.TableName(), rows))
	for range 3 { // the tiers age
		clk.Advance(7 * 24 * time.Hour)
		invoke(lifecycle.OpCreateNew)
		invoke(lifecycle.OpResizeOld)
	}
	// The packed family's table left the hot tier: fenced, rewritten
	// into its next physical table once the fence settled, and the old
	// table deleted FenceSettle after the switch.
	for range 3 {
		invoke(lifecycle.OpReconcile)
		clk.Advance(registry.DefaultFenceSettle)
	}
	e, err := reg.Get(ctx, "packed", week.Ref.Period.Start, week.Name)
	require.NoError(t, err)
	require.Equal(t, week.Name+".r1", e.TableName(), "rewritten")
	require.Nil(t, e.Rewrite, "the old table deleted")
	_, err = setup.DescribeTable(ctx, week.Name)
	require.ErrorIs(t, err, storage.ErrTableNotFound)

	if dynamotest.Lacks(dynamotest.Tagging) != "" {
		// The store stops asking an endpoint without tagging for tags
		// after its first refusal (DynamoDB Local): dynalite's run
		// records the adoption's ListTagsOfResource.
		recorded.add("dynamodb:ListTagsOfResource")
		// There the operator adopted the old table (AdoptUntagged), which
		// the function tags with TagResource where tags are kept.
		recorded.add("dynamodb:TagResource")
	}
	// Application Auto Scaling makes its service-linked role for
	// DynamoDB with the caller's rights, on first use.
	recorded.add("iam:CreateServiceLinkedRole")
	// Target tracking makes, reads and removes its CloudWatch alarms in
	// the caller's name (PutScalingPolicy, DeregisterScalableTarget),
	// which the fake does not.
	recorded.add("cloudwatch:PutMetricAlarm")
	recorded.add("cloudwatch:DescribeAlarms")
	recorded.add("cloudwatch:DeleteAlarms")
	// An SSE-KMS bucket (ArchiveKMSKey) has S3 ask KMS for a data key on
	// each write and to decrypt on each read in the caller's name; the
	// fake S3 encrypts nothing.
	recorded.add("kms:GenerateDataKey")
	recorded.add("kms:Decrypt")
	// The S3 upload manager aborts a streamed export's multipart upload
	// when the export fails, which this run's exports do not.
	recorded.add("s3:AbortMultipartUpload")
	// DynamoDB's export writes to S3 with the caller's rights, asking
	// for PutObjectAcl too ("Requesting a table export in DynamoDB"),
	// which the fake's own PutObject calls do not record.
	recorded.add("s3:PutObjectAcl")
	require.Equal(t, granted(t), recorded.sorted())
}
