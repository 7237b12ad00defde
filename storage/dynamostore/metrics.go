package dynamostore

import (
	"context"
	"strings"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the store's Prometheus metrics. With no registerer they are
// kept but never exported.
type metrics struct {
	throttles   *prometheus.CounterVec
	retries     *prometheus.CounterVec
	unprocessed *prometheus.CounterVec
	capacity    *prometheus.CounterVec
	// examined and returned are the items Query and Scan read in the
	// table (DynamoDB's ScannedCount) and sent back after the filter
	// (Count): a filter pushed down shows as returned below examined.
	examined *prometheus.CounterVec
	returned *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		throttles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_dynamodb_throttles_total",
			Help: "Attempts of DynamoDB requests answered with a throttling error, by table, operation and reason (DynamoDB's ThrottlingReasons: provisioned_, key_range_, on_demand_max_ or account_limit_ read or write, or unknown).",
		}, []string{"table", "operation", "reason"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_dynamodb_retries_total",
			Help: "Attempts of DynamoDB requests after the first, made by the retryer, by table and operation.",
		}, []string{"table", "operation"}),
		unprocessed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_dynamodb_unprocessed_items_total",
			Help: "Items BatchWriteItem answered as UnprocessedItems, by table; each is sent again or reported unwritten.",
		}, []string{"table"}),
		capacity: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_dynamodb_consumed_capacity_units_total",
			Help: "Capacity units consumed, as DynamoDB reports them, by table and operation.",
		}, []string{"table", "operation"}),
		examined: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_dynamodb_items_examined_total",
			Help: "Items Query and Scan read in the table (ScannedCount), before any filter, by table and operation; billed as read.",
		}, []string{"table", "operation"}),
		returned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "timetable_dynamodb_items_returned_total",
			Help: "Items Query and Scan returned (Count), after the filter, by table and operation.",
		}, []string{"table", "operation"}),
	}
	if reg != nil {
		reg.MustRegister(m.throttles, m.retries, m.unprocessed, m.capacity, m.examined, m.returned)
	}
	return m
}

// clientOption adds the middleware that measures a request to the
// request's stack. Each request gets a middleware of its own.
func (m *metrics) clientOption(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		r := &requestMetrics{m: m}
		if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("timetable.Metrics", r.request), middleware.After); err != nil {
			return err
		}
		// After the retryer, so inside its loop: it sees every attempt.
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("timetable.AttemptMetrics", r.attempt), "Retry", middleware.After)
	})
}

// requestMetrics measures one request: its table, its attempts and the
// capacity it consumed. The retryer makes the attempts one after another.
type requestMetrics struct {
	m        *metrics
	table    string
	attempts int
}

// request learns the table from the input and, once the request is done,
// counts the capacity its output reports.
func (r *requestMetrics) request(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	r.table = inputTable(in.Parameters)
	out, md, err := next.HandleInitialize(ctx, in)
	if err == nil {
		op := awsmiddleware.GetOperationName(ctx)
		for _, c := range consumedCapacity(out.Result) {
			table := r.table
			if c.TableName != nil {
				table = *c.TableName
			}
			if c.CapacityUnits != nil {
				r.m.capacity.WithLabelValues(table, op).Add(*c.CapacityUnits)
			}
		}
		if examined, returned, ok := itemCounts(out.Result); ok {
			r.m.examined.WithLabelValues(r.table, op).Add(float64(examined))
			r.m.returned.WithLabelValues(r.table, op).Add(float64(returned))
		}
	}
	return out, md, err
}

// attempt counts one attempt: a retry when it is not the first, a
// throttle when DynamoDB answers with a throttling error.
func (r *requestMetrics) attempt(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	op := awsmiddleware.GetOperationName(ctx)
	r.attempts++
	if r.attempts > 1 {
		r.m.retries.WithLabelValues(r.table, op).Inc()
	}
	out, md, err := next.HandleFinalize(ctx, in)
	if isThrottle(err) {
		for _, reason := range throttleReasons(err) {
			r.m.throttles.WithLabelValues(r.table, op, reason).Inc()
		}
	}
	return out, md, err
}

// inputTable returns the table a request's input names, or "".
func inputTable(params any) string {
	var name *string
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		name = in.TableName
	case *dynamodb.QueryInput:
		name = in.TableName
	case *dynamodb.ScanInput:
		name = in.TableName
	case *dynamodb.UpdateItemInput:
		name = in.TableName
	case *dynamodb.PutItemInput:
		name = in.TableName
	case *dynamodb.DeleteItemInput:
		name = in.TableName
	case *dynamodb.BatchWriteItemInput:
		// The store writes to one table per request.
		for t := range in.RequestItems {
			return t
		}
	case *dynamodb.CreateTableInput:
		name = in.TableName
	case *dynamodb.DescribeTableInput:
		name = in.TableName
	case *dynamodb.UpdateTableInput:
		name = in.TableName
	case *dynamodb.DeleteTableInput:
		name = in.TableName
	case *dynamodb.UpdateTimeToLiveInput:
		name = in.TableName
	case *dynamodb.DescribeTimeToLiveInput:
		name = in.TableName
	case *dynamodb.TagResourceInput:
		return arnTable(in.ResourceArn)
	case *dynamodb.ListTagsOfResourceInput:
		return arnTable(in.ResourceArn)
	}
	if name == nil {
		return ""
	}
	return *name
}

// arnTable returns the table name of a table's ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME), or "".
func arnTable(arn *string) string {
	if arn == nil {
		return ""
	}
	_, name, _ := strings.Cut(*arn, ":table/")
	return name
}

// itemCounts returns the items a Query or Scan output says were examined
// and returned; ok is false for other outputs.
func itemCounts(result any) (examined, returned int32, ok bool) {
	switch out := result.(type) {
	case *dynamodb.QueryOutput:
		return out.ScannedCount, out.Count, true
	case *dynamodb.ScanOutput:
		return out.ScannedCount, out.Count, true
	}
	return 0, 0, false
}

// consumedCapacity returns the capacity a request's output reports.
func consumedCapacity(result any) []types.ConsumedCapacity {
	var c *types.ConsumedCapacity
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		c = out.ConsumedCapacity
	case *dynamodb.QueryOutput:
		c = out.ConsumedCapacity
	case *dynamodb.ScanOutput:
		c = out.ConsumedCapacity
	case *dynamodb.UpdateItemOutput:
		c = out.ConsumedCapacity
	case *dynamodb.PutItemOutput:
		c = out.ConsumedCapacity
	case *dynamodb.DeleteItemOutput:
		c = out.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		return out.ConsumedCapacity
	}
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}
