package lifecycle_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestDeleteNeverAnsweredEndsTheCycle reconciles tables past retention
// through a DynamoDB whose DeleteTable is never answered
// (dynamofault.Hang), with a cycle context without deadline, as
// `timetable reconcile` runs: the cycle ends, each delete deferred with
// an error naming the call, once the store's ControlTimeout is over, and
// the tables are still there for the next cycle.
func TestDeleteNeverAnsweredEndsTheCycle(t *testing.T) {
	ctx := context.Background()
	store, cfg, _, _ := backends.OpenDynamo(t, nil) // makes and cleans up the tables
	metaTables.Store(cfg.Families[0].Prefix, cfg.MetaTable)
	f := cfg.Families[0]
	f.Billing, f.Tiers = storage.Provisioned, family.BlogTiers()
	f.Retention = 14 * 24 * time.Hour
	oldTables(t, store, f)

	hang := dynamofault.New(dynamofault.Options{Mix: dynamofault.Mix{dynamofault.Hang: 1}, Operations: []string{"DeleteTable"},
		Next: dynamofault.NewControlPlane(dynamofault.ControlPlaneOptions{})})
	hanging, err := dynamostore.Open(ctx, dynamostore.Options{ControlTimeout: 300 * time.Millisecond, AutoScaling: dynamofault.NewAutoScaling(),
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.BaseEndpoint = backendsEndpoint()
			o.HTTPClient = &http.Client{Transport: hang}
		}}})
	require.NoError(t, err)
	defer hanging.Close()

	clk := clock.NewManual(at("2017-05-15T12:00:00Z"))
	r := reconciler(t, lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: hanging, Families: []family.Family{f}, Clock: clk})
	res, err := r.Reconcile(ctx, false)
	require.NoError(t, err, "an endpoint that does not answer defers the action")
	deletes := 0
	for _, x := range res {
		if x.Kind != lifecycle.Delete {
			continue
		}
		deletes++
		require.Equal(t, lifecycle.Deferred, x.Outcome, x.Table)
		require.ErrorIs(t, x.Err, storage.ErrUnavailable)
		require.ErrorContains(t, x.Err, "DeleteTable not answered within 300ms")
		_, err := store.DescribeTable(ctx, x.Table)
		require.NoError(t, err, "%s is still there, for the next cycle", x.Table)
	}
	require.Positive(t, deletes, "April's tables are past retention")
}

// backendsEndpoint is the DynamoDB endpoint the backends reach.
func backendsEndpoint() *string {
	ep := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	if ep == "" {
		ep = os.Getenv(backends.EndpointEnv)
	}
	return &ep
}
