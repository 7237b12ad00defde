package dynamostore

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/storage"
)

// TestTTLUnsupported runs against dynalite, which answers
// UpdateTimeToLive with UnknownOperationException.
func TestTTLUnsupported(t *testing.T) {
	testEndpoint(t)
	if dynamotest.Lacks(dynamotest.TTL) == "" {
		t.Skipf("%s has TTL: TestTTLEnabled covers it", dynamotest.Server())
	}
	logs := &recordingHandler{}
	s := openStore(t, Options{Logger: slog.New(logs)})
	ctx := context.Background()
	tags := map[string]string{"family": "events"}
	first := createTable(t, s, storage.TableSpec{TTLAttribute: "expires", Tags: tags})
	second := createTable(t, s, storage.TableSpec{TTLAttribute: "expires"})

	require.Equal(t, 1, logs.count(slog.LevelWarn), "one warning per store")
	require.Contains(t, logs.messages()[0], "does not support TTL")

	info, err := s.DescribeTable(ctx, first)
	require.NoError(t, err)
	require.Equal(t, "expires", info.TTLAttribute, "the attribute asked for")
	require.Equal(t, tags, info.Tags, "the tag recording it stays inside")
	info, err = s.DescribeTable(ctx, second)
	require.NoError(t, err)
	require.Equal(t, "expires", info.TTLAttribute)
	require.Empty(t, info.Tags)

	// Everything else works.
	it := storage.Item{PK: "p", SK: "s", Attrs: map[string]any{"expires": json.Number("1491825600")}}
	require.NoError(t, s.BatchWrite(ctx, first, []storage.Item{it}))
	got, err := s.GetItem(ctx, first, "p", "s")
	require.NoError(t, err)
	require.Equal(t, it, got)
}

// TestTTLEnabled checks the success path below the HTTP layer: a transport
// in front of dynalite answers the two TTL operations as DynamoDB does,
// refusing to enable TTL twice, and forwards everything else.
func TestTTLEnabled(t *testing.T) {
	logs := &recordingHandler{}
	fake := &ttlServer{next: http.DefaultTransport}
	s := openStore(t, Options{Logger: slog.New(logs), ClientOptions: []func(*dynamodb.Options){
		func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: fake} },
	}})
	ctx := context.Background()

	name := createTable(t, s, storage.TableSpec{TTLAttribute: "expires"})
	require.Equal(t, map[string]string{name: "expires"}, fake.enabled())
	require.Equal(t, 1, fake.updates())
	info, err := s.DescribeTable(ctx, name)
	require.NoError(t, err)
	require.Equal(t, "expires", info.TTLAttribute)
	if dynamotest.Lacks(dynamotest.Tagging) == "" {
		tags, err := s.Client().ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(tableARN(t, s, name))})
		require.NoError(t, err)
		require.Empty(t, tags.Tags, "no fallback tag where TTL works")
	}

	// Creating it again leaves TTL as it is: DynamoDB would refuse.
	err = s.CreateTable(ctx, storage.TableSpec{Name: name, TTLAttribute: "expires"})
	require.ErrorIs(t, err, storage.ErrTableExists)
	require.Equal(t, 1, fake.updates())

	// A table whose creator stopped before enabling TTL gets it from the
	// next caller.
	other := createTable(t, s, storage.TableSpec{})
	require.Equal(t, 1, fake.updates())
	err = s.CreateTable(ctx, storage.TableSpec{Name: other, TTLAttribute: "expires"})
	require.ErrorIs(t, err, storage.ErrTableExists)
	require.Equal(t, map[string]string{name: "expires", other: "expires"}, fake.enabled())

	// No warning: an endpoint's lack of tagging is said at info level.
	require.Zero(t, logs.count(slog.LevelWarn), "%v", logs.messages())
}

func tableARN(t *testing.T, s *Store, name string) string {
	arn, err := s.tableARN(context.Background(), name)
	require.NoError(t, err)
	return arn
}

// ttlServer answers UpdateTimeToLive and DescribeTimeToLive as DynamoDB
// does and forwards every other request to next.
type ttlServer struct {
	next http.RoundTripper
	mu   sync.Mutex
	ttl  map[string]string // table → attribute with TTL enabled
	n    int               // UpdateTimeToLive calls
}

func (f *ttlServer) enabled() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.ttl))
	for k, v := range f.ttl {
		out[k] = v
	}
	return out
}

func (f *ttlServer) updates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *ttlServer) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.Header.Get("X-Amz-Target")
	if !strings.HasSuffix(target, ".UpdateTimeToLive") && !strings.HasSuffix(target, ".DescribeTimeToLive") {
		return f.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var in struct {
		TableName               string
		TimeToLiveSpecification struct {
			AttributeName string
			Enabled       bool
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ttl == nil {
		f.ttl = make(map[string]string)
	}
	if strings.HasSuffix(target, ".DescribeTimeToLive") {
		if attr, ok := f.ttl[in.TableName]; ok {
			return jsonResponse(req, 200, map[string]any{"TimeToLiveDescription": map[string]string{"AttributeName": attr, "TimeToLiveStatus": "ENABLED"}}), nil
		}
		return jsonResponse(req, 200, map[string]any{"TimeToLiveDescription": map[string]string{"TimeToLiveStatus": "DISABLED"}}), nil
	}
	f.n++
	if _, ok := f.ttl[in.TableName]; ok && in.TimeToLiveSpecification.Enabled {
		return jsonResponse(req, 400, map[string]string{
			"__type":  "com.amazonaws.dynamodb.v20120810#ValidationException",
			"message": "TimeToLive is already enabled",
		}), nil
	}
	f.ttl[in.TableName] = in.TimeToLiveSpecification.AttributeName
	return jsonResponse(req, 200, map[string]any{"TimeToLiveSpecification": in.TimeToLiveSpecification}), nil
}

func jsonResponse(req *http.Request, status int, v any) *http.Response {
	body, _ := json.Marshal(v)
	return &http.Response{
		StatusCode:    status,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// recordingHandler keeps the log records it handles.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) count(level slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.records {
		if r.Level == level {
			n++
		}
	}
	return n
}

func (h *recordingHandler) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		out = append(out, r.Message)
	}
	return out
}

// TestTTLOnAnotherAttributeIsRefused: DynamoDB keeps one TTL attribute
// per table, so a table whose TTL is on another attribute is refused for
// now (storage.ErrRefused, which the lifecycle defers) with what to do,
// and no UpdateTimeToLive is sent that DynamoDB would refuse.
func TestTTLOnAnotherAttributeIsRefused(t *testing.T) {
	dynamotest.SkipUnless(t, dynamotest.TTL)
	s := openStore(t, Options{})
	ctx := context.Background()
	name := createTable(t, s, storage.TableSpec{TTLAttribute: "exp"})

	err := s.UpdateTable(ctx, name, storage.TableUpdate{TTLAttribute: "tt_exp"})
	require.ErrorIs(t, err, storage.ErrRefused)
	require.Contains(t, err.Error(), `on attribute "exp"`)
	require.Contains(t, err.Error(), "Enabled=false")
	info, err := s.DescribeTable(ctx, name)
	require.NoError(t, err)
	require.Equal(t, "exp", info.TTLAttribute, "unchanged")
}

// disablingTTL answers DescribeTimeToLive with DISABLING, as DynamoDB does
// for up to an hour after TTL is turned off, which neither local server
// shows, and counts UpdateTimeToLive calls; it forwards everything else.
type disablingTTL struct {
	next    http.RoundTripper
	updates int
}

func (d *disablingTTL) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.Header.Get("X-Amz-Target")
	switch {
	case strings.HasSuffix(target, ".DescribeTimeToLive"):
		return jsonResponse(req, 200, map[string]any{"TimeToLiveDescription": map[string]string{"TimeToLiveStatus": "DISABLING"}}), nil
	case strings.HasSuffix(target, ".UpdateTimeToLive"):
		d.updates++
		return jsonResponse(req, 400, map[string]string{
			"__type":  "com.amazonaws.dynamodb.v20120810#ValidationException",
			"message": "Time to live has been modified multiple times within a fixed interval",
		}), nil
	}
	return d.next.RoundTrip(req)
}

func TestTTLBeingDisabledIsRefused(t *testing.T) {
	fake := &disablingTTL{next: http.DefaultTransport}
	s := openStore(t, Options{ClientOptions: []func(*dynamodb.Options){
		func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: fake} },
	}})
	name := createTable(t, s, storage.TableSpec{})
	err := s.UpdateTable(context.Background(), name, storage.TableUpdate{TTLAttribute: "tt_exp"})
	require.ErrorIs(t, err, storage.ErrRefused)
	require.Contains(t, err.Error(), "DISABLING")
	require.Zero(t, fake.updates, "nothing DynamoDB would refuse is sent")
}
