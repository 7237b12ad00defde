package dynamofault_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// tinyServer is the least of a DynamoDB-API server that the ControlPlane
// needs behind it: one table's billing mode and provisioned throughput,
// which it changes as told and keeps no rule about, as the local servers
// do.
type tinyServer struct {
	mu          sync.Mutex
	billing     string
	read, write int64
}

func (s *tinyServer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	var in map[string]any
	_ = json.Unmarshal(body, &in)
	op := req.Header.Get("X-Amz-Target")
	op = op[strings.LastIndexByte(op, '.')+1:]
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := in["BillingMode"].(string); ok {
		s.billing = b
	}
	if pt, ok := in["ProvisionedThroughput"].(map[string]any); ok {
		s.read, s.write = int64(pt["ReadCapacityUnits"].(float64)), int64(pt["WriteCapacityUnits"].(float64))
	}
	desc := map[string]any{
		"TableName": "t", "TableStatus": "ACTIVE",
		"BillingModeSummary":    map[string]any{"BillingMode": s.billing},
		"ProvisionedThroughput": map[string]any{"ReadCapacityUnits": s.read, "WriteCapacityUnits": s.write},
	}
	var out map[string]any
	switch op {
	case "DescribeTable":
		out = map[string]any{"Table": desc}
	case "UpdateTimeToLive":
		out = map[string]any{"TimeToLiveSpecification": in["TimeToLiveSpecification"]}
	default:
		out = map[string]any{"TableDescription": desc}
	}
	b, _ := json.Marshal(out)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: req}, nil
}

func code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func TestControlPlaneRules(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 3, 3, 0, 30, 0, 0, time.UTC)
	cp := dynamofault.NewControlPlane(dynamofault.ControlPlaneOptions{
		Now:  func() time.Time { return now },
		Next: &tinyServer{billing: "PROVISIONED", read: 100, write: 100},
	})
	c := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://dynamodb.test"),
		Credentials:      aws.AnonymousCredentials{},
		HTTPClient:       &http.Client{Transport: cp},
		RetryMaxAttempts: 1,
	})
	name := aws.String("t")
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: name, DeletionProtectionEnabled: aws.Bool(true),
		BillingMode: types.BillingModeProvisioned, ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(100), WriteCapacityUnits: aws.Int64(100)}})
	require.NoError(t, err)

	// Four switches to on demand in 24 hours; the fifth waits.
	for i := range 5 {
		_, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, BillingMode: types.BillingModePayPerRequest})
		if i < 4 {
			require.NoError(t, err, "switch %d", i+1)
		} else {
			require.Equal(t, "LimitExceededException", code(err), "switch 5")
		}
		_, err = c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, BillingMode: types.BillingModeProvisioned,
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(100), WriteCapacityUnits: aws.Int64(100)}})
		require.NoError(t, err, "back to provisioned at any time")
		now = now.Add(time.Minute)
	}
	now = now.Add(24 * time.Hour)
	_, err = c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, BillingMode: types.BillingModePayPerRequest})
	require.NoError(t, err, "a day later")
	_, err = c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, BillingMode: types.BillingModeProvisioned,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1000), WriteCapacityUnits: aws.Int64(1000)}})
	require.NoError(t, err)

	// Decreases: four at once, then one an hour, 27 in the UTC day.
	units := int64(1000)
	decrease := func() error {
		units--
		_, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name,
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(units), WriteCapacityUnits: aws.Int64(units)}})
		if err != nil {
			units++
		}
		return err
	}
	for i := range 4 {
		require.NoError(t, decrease(), "decrease %d", i+1)
	}
	require.Equal(t, "LimitExceededException", code(decrease()), "a fifth at once")
	n := 4
	for range 23 {
		now = now.Add(time.Hour)
		require.NoError(t, decrease(), "decrease %d, an hour after the last", n+1)
		n++
	}
	require.Equal(t, 27, n)
	require.Equal(t, "LimitExceededException", code(decrease()), "a 28th in the same UTC day")

	// Two class changes in 30 days.
	for i, class := range []types.TableClass{types.TableClassStandardInfrequentAccess, types.TableClassStandard, types.TableClassStandardInfrequentAccess} {
		_, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, TableClass: class})
		if i < 2 {
			require.NoError(t, err, "class change %d", i+1)
		} else {
			require.Equal(t, "LimitExceededException", code(err), "class change 3")
		}
	}
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: name})
	require.NoError(t, err)
	require.Equal(t, types.TableClassStandard, d.Table.TableClassSummary.TableClass)
	require.True(t, aws.ToBool(d.Table.DeletionProtectionEnabled))

	// One TTL change an hour.
	ttl := func() error {
		_, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: name,
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("x"), Enabled: aws.Bool(true)}})
		return err
	}
	require.NoError(t, ttl())
	require.Equal(t, "ValidationException", code(ttl()))
	now = now.Add(time.Hour)
	require.NoError(t, ttl())

	// Point-in-time recovery, 1 to 35 days.
	_, err = c.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: name,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: aws.Int32(36)}})
	require.Equal(t, "ValidationException", code(err))
	_, err = c.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: name,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: aws.Int32(7)}})
	require.NoError(t, err)
	b, err := c.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: name})
	require.NoError(t, err)
	p := b.ContinuousBackupsDescription.PointInTimeRecoveryDescription
	require.Equal(t, types.PointInTimeRecoveryStatusEnabled, p.PointInTimeRecoveryStatus)
	require.Equal(t, int32(7), aws.ToInt32(p.RecoveryPeriodInDays))

	// Deletion protection holds until lifted.
	_, err = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: name})
	require.Equal(t, "ValidationException", code(err))
	_, err = c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: name, DeletionProtectionEnabled: aws.Bool(false)})
	require.NoError(t, err)
	_, err = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: name})
	require.NoError(t, err)

	require.Len(t, cp.Refusals(), 6, "each refusal recorded")
}
