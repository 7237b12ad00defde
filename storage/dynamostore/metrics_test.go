package dynamostore

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestMetrics writes and reads through throttling and unprocessed items
// and checks the store's counters against what the fault transport did.
func TestMetrics(t *testing.T) {
	testEndpoint(t)
	faults := dynamofault.New(dynamofault.Options{
		Seed:       1,
		Mix:        dynamofault.Mix{dynamofault.Throttling: 0.2, dynamofault.Throughput: 0.1, dynamofault.Unprocessed: 0.3},
		Operations: []string{"BatchWriteItem"},
	})
	reg := prometheus.NewRegistry()
	s := openStore(t, Options{
		Registerer:             reg,
		MaxAttempts:            20,
		MaxUnprocessedAttempts: 20,
		RetryBaseDelay:         time.Millisecond,
		MaxBackoff:             5 * time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: faults}
		}},
	})
	name := createTable(t, s, storage.TableSpec{})
	ctx := context.Background()
	items := faultItems(500) // about 180 bytes each: one write unit
	require.NoError(t, s.BatchWrite(ctx, name, items))
	_, err := s.GetItem(ctx, name, items[0].PK, items[0].SK)
	require.NoError(t, err)
	require.Len(t, drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: items[0].PK})), 72)

	counts := faults.Counts()
	throttled := float64(counts[dynamofault.Throttling] + counts[dynamofault.Throughput])
	require.Positive(t, throttled)
	require.Positive(t, counts[dynamofault.Unprocessed])
	write := map[string]string{"table": name, "operation": "BatchWriteItem"}
	require.Equal(t, throttled, counterValue(t, reg, "timetable_dynamodb_throttles_total", withReason(write, ReasonUnknown)), "no reasons given")
	// Every throttled attempt was retried, and nothing else was.
	require.Equal(t, throttled, counterValue(t, reg, "timetable_dynamodb_retries_total", write))
	require.GreaterOrEqual(t, counterValue(t, reg, "timetable_dynamodb_unprocessed_items_total", map[string]string{"table": name}),
		float64(counts[dynamofault.Unprocessed]), "at least one item each time")
	// Each item is written once, at one write unit.
	require.Equal(t, float64(len(items)), counterValue(t, reg, "timetable_dynamodb_consumed_capacity_units_total", write))
	require.Equal(t, 1.0, counterValue(t, reg, "timetable_dynamodb_consumed_capacity_units_total", map[string]string{"table": name, "operation": "GetItem"}))
	require.Positive(t, counterValue(t, reg, "timetable_dynamodb_consumed_capacity_units_total", map[string]string{"table": name, "operation": "Query"}))
}

func withReason(labels map[string]string, reason string) map[string]string {
	out := map[string]string{"reason": reason}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// TestThrottleReasons throttles writes with the reasons DynamoDB gives
// since 2025 and counts them by reason.
func TestThrottleReasons(t *testing.T) {
	testEndpoint(t)
	for _, tc := range []struct {
		fault   dynamofault.Fault
		reasons []string
		want    []string
	}{
		{dynamofault.Throughput, []string{"TableWriteProvisionedThroughputExceeded"}, []string{ReasonProvisionedWrite}},
		{dynamofault.Throttling, []string{"TableWriteKeyRangeThroughputExceeded"}, []string{ReasonKeyRangeWrite}},
		{dynamofault.Throttling, []string{"TableWriteMaxOnDemandThroughputExceeded", "IndexWriteAccountLimitExceeded"}, []string{ReasonOnDemandMaxWrite, ReasonAccountWrite}},
	} {
		t.Run(tc.fault.String()+"/"+tc.reasons[0], func(t *testing.T) {
			faults := dynamofault.New(dynamofault.Options{
				Seed: 2, Mix: dynamofault.Mix{tc.fault: 0.3}, Operations: []string{"BatchWriteItem"}, ThrottlingReasons: tc.reasons,
			})
			reg := prometheus.NewRegistry()
			s := openStore(t, Options{
				Registerer: reg, MaxAttempts: 30, RetryBaseDelay: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
				ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: faults} }},
			})
			name := createTable(t, s, storage.TableSpec{})
			// 40 batches: the batches go out at once, so which of them draws
			// a fault varies; with 40 none does about once in 10^6 runs.
			require.NoError(t, s.BatchWrite(context.Background(), name, faultItems(1000)))
			throttled := float64(faults.Counts()[tc.fault])
			require.Positive(t, throttled)
			write := map[string]string{"table": name, "operation": "BatchWriteItem"}
			for _, r := range tc.want {
				require.Equal(t, throttled, counterValue(t, reg, "timetable_dynamodb_throttles_total", withReason(write, r)), r)
			}
			require.Zero(t, counterValue(t, reg, "timetable_dynamodb_throttles_total", withReason(write, ReasonUnknown)))
		})
	}
}

func TestThrottleReason(t *testing.T) {
	for reason, want := range map[string]string{
		"TableReadProvisionedThroughputExceeded":  ReasonProvisionedRead,
		"TableWriteProvisionedThroughputExceeded": ReasonProvisionedWrite,
		"IndexReadProvisionedThroughputExceeded":  ReasonProvisionedRead,
		"TableReadKeyRangeThroughputExceeded":     ReasonKeyRangeRead,
		"TableWriteKeyRangeThroughputExceeded":    ReasonKeyRangeWrite,
		"TableReadMaxOnDemandThroughputExceeded":  ReasonOnDemandMaxRead,
		"IndexWriteMaxOnDemandThroughputExceeded": ReasonOnDemandMaxWrite,
		"TableReadAccountLimitExceeded":           ReasonAccountRead,
		"TableWriteAccountLimitExceeded":          ReasonAccountWrite,
		"":                                        ReasonUnknown,
		"TableWriteSomethingNew":                  ReasonUnknown,
		"StreamReadProvisionedThroughputExceeded": ReasonUnknown,
	} {
		require.Equal(t, want, throttleReason(reason), reason)
	}
	require.Equal(t, []string{ReasonUnknown}, throttleReasons(&types.ThrottlingException{}))
	require.Equal(t, []string{ReasonKeyRangeRead}, throttleReasons(&types.RequestLimitExceeded{
		ThrottlingReasons: []types.ThrottlingReason{{Reason: aws.String("TableReadKeyRangeThroughputExceeded")}},
	}))
}

// A CreateTable refused with LimitExceededException is the table quota
// only when the tables counted reach it; otherwise it is the limit on
// table operations at once, whatever the message says.
func TestTableQuotaIsCounted(t *testing.T) {
	testEndpoint(t)
	plain := openStore(t, Options{})
	createTable(t, plain, storage.TableSpec{}) // at least one table exists
	for _, tc := range []struct {
		name    string
		quota   int
		message string
		want    error
	}{
		{"at the quota", 1, "Subscriber limit exceeded: Number of tables exceeds the limit", storage.ErrTableQuota},
		{"under the quota, a message of tables", 1 << 30, "Subscriber limit exceeded: Number of tables exceeds the limit", storage.ErrRefused},
		{"under the quota, operations at once", 1 << 30, dynamofault.DefaultLimitMessage, storage.ErrRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faults := dynamofault.New(dynamofault.Options{Mix: dynamofault.Mix{dynamofault.TableLimit: 1}, LimitMessage: tc.message})
			s := openStore(t, Options{
				TableQuota:    tc.quota,
				ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: faults} }},
			})
			err := s.CreateTable(context.Background(), storage.TableSpec{Name: tableName(t)})
			require.ErrorIs(t, err, tc.want)
			if tc.want == storage.ErrRefused {
				require.NotErrorIs(t, err, storage.ErrTableQuota)
			}
		})
	}
}

// TestMetricsWithoutRegisterer checks that a store without a registerer
// works, and that two such stores can coexist.
func TestMetricsWithoutRegisterer(t *testing.T) {
	a := openStore(t, Options{})
	b := openStore(t, Options{})
	name := createTable(t, a, storage.TableSpec{})
	require.NoError(t, a.BatchWrite(context.Background(), name, faultItems(3)))
	require.Len(t, drainItems(t, b.Scan(context.Background(), name)), 3)
}

func TestInputTable(t *testing.T) {
	require.Equal(t, "t1", inputTable(&dynamodb.GetItemInput{TableName: aws.String("t1")}))
	require.Equal(t, "t2", inputTable(&dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t2": nil}}))
	require.Equal(t, "t3", inputTable(&dynamodb.TagResourceInput{ResourceArn: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/t3")}))
	require.Equal(t, "", inputTable(&dynamodb.ListTablesInput{}))
}

// counterValue returns the value of the counter name with the labels, or
// 0 when there is none.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestFilterIsPushedDown reads one partition with and without a filter
// and counts what DynamoDB examined and sent back: the filter runs on the
// server, so the non-matching items never cross the network, while the
// items examined, and the capacity billed, are the same.
func TestFilterIsPushedDown(t *testing.T) {
	testEndpoint(t)
	reg := prometheus.NewRegistry()
	s := openStore(t, Options{Registerer: reg})
	name := createTable(t, s, storage.TableSpec{})
	ctx := context.Background()
	items := faultItems(700)
	require.NoError(t, s.BatchWrite(ctx, name, items))
	pk := items[0].PK
	filter := &storage.Filter{Op: storage.FilterLt, Attr: "speed", Value: json.Number("12")}
	var inPartition, matching int
	for _, it := range items {
		if it.PK == pk {
			inPartition++
			if filter.Match(it.Attrs) {
				matching++
			}
		}
	}
	require.Positive(t, matching)
	require.Less(t, matching, inPartition/4)

	type reading struct{ examined, returned, capacity float64 }
	read := func(f *storage.Filter) (reading, []storage.Item) {
		before := func(metric string) float64 {
			return counterValue(t, reg, metric, map[string]string{"table": name, "operation": "Query"})
		}
		e, r, c := before("timetable_dynamodb_items_examined_total"), before("timetable_dynamodb_items_returned_total"), before("timetable_dynamodb_consumed_capacity_units_total")
		got := drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: pk, Filter: f}))
		return reading{
			examined: before("timetable_dynamodb_items_examined_total") - e,
			returned: before("timetable_dynamodb_items_returned_total") - r,
			capacity: before("timetable_dynamodb_consumed_capacity_units_total") - c,
		}, got
	}
	whole, all := read(nil)
	require.Len(t, all, inPartition)
	require.Equal(t, reading{examined: float64(inPartition), returned: float64(inPartition), capacity: whole.capacity}, whole)
	filtered, some := read(filter)
	require.Len(t, some, matching)
	for _, it := range some {
		require.True(t, filter.Match(it.Attrs), "%v", it.Attrs)
	}
	require.Equal(t, reading{examined: float64(inPartition), returned: float64(matching), capacity: whole.capacity}, filtered,
		"the same items examined and billed, only the matching ones returned")
}
