package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/client"
)

// What the real server answers decodes into api's types and encodes
// back to the very bytes it sent, on every route the client reads.
func TestServerAnswersAreAPITypes(t *testing.T) {
	url, stop := serve()
	defer stop()
	ctx := context.Background()
	admin, err := client.New(url, adminToken, nil)
	require.NoError(t, err)
	added, err := admin.AddTenant(ctx, "acme")
	require.NoError(t, err)
	key := added.Key.Secret
	_, err = admin.RotateKey(ctx, "acme", added.Key.ID, time.Hour)
	require.NoError(t, err)
	acme, err := client.New(url, key, nil)
	require.NoError(t, err)
	start := time.Date(2017, 4, 10, 11, 0, 0, 0, time.UTC)
	var events []api.Event
	for i := range 6 {
		events = append(events, api.Event{Time: start.Add(time.Duration(i) * 17 * time.Minute), Series: fmt.Sprint("car-", i%2), ID: fmt.Sprint("e", i),
			Fields: map[string]any{"speed": json.Number(fmt.Sprint(i, ".5")), "gear": "D", "tags": []any{"a", json.Number("1")}}})
	}
	_, err = acme.Write(ctx, "cars", events)
	require.NoError(t, err)

	for _, c := range []struct {
		path, token string
		into        any
	}{
		{"/v1/tables", key, &api.LogicalTables{}},
		{"/v1/tables/cars/series?limit=1", key, &api.SeriesPage{}},
		{"/v1/tables/cars/events?from=2017-04-10T11:00:00Z&to=2017-04-10T13:00:00Z&limit=4", key, &api.Page{}},
		{"/v1/tables/cars/aggregate?from=2017-04-10T11:30:00Z&to=2017-04-10T13:00:00Z&bucket=1h&fields=speed&fn=count,sum,avg,first&fill=true", key, &api.Aggregate{}},
		{"/v1/tables/cars/aggregate?from=2017-04-10T11:00:00Z&to=2017-04-10T13:00:00Z&bucket=1h&fields=speed&fn=max&group_by=series&group_limit=1", key, &api.Aggregate{}},
		// Every series of a range without events panics in the engine
		// (aggregateEachSeries, own[0] of no workers): one series here.
		{"/v1/tables/cars/aggregate?from=2016-04-10T11:00:00Z&to=2016-04-10T13:00:00Z&bucket=1h&fn=count&series=car-0", key, &api.Aggregate{}},
		{"/v1/admin/tenants", adminToken, &api.Tenants{}},
		{"/v1/admin/tenants/acme/keys", adminToken, &api.Keys{}},
		{"/v1/admin/tables", adminToken, &api.PhysicalTables{}},
		{"/v1/admin/planner?rate=600&retention=90d", adminToken, &api.Planner{}},
		{"/healthz", "", &api.Health{}},
		{"/readyz", "", &api.Health{}},
		{"/v1/tables/trucks/events", key, &api.ErrorBody{}},
		{"/v1/admin/plan", adminToken, &api.ErrorBody{}},
	} {
		t.Run(c.path, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, url+c.path, nil)
			require.NoError(t, err)
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			raw, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			_, isError := c.into.(*api.ErrorBody)
			require.Equal(t, isError, res.StatusCode/100 != 2, "%s", raw)
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(c.into), "%s", raw)
			require.False(t, reflect.ValueOf(c.into).Elem().IsZero())
			b, err := json.Marshal(c.into)
			require.NoError(t, err)
			require.Equal(t, strings.TrimSuffix(string(raw), "\n"), string(b))
		})
	}
}
