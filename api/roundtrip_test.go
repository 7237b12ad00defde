package api_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
)

// Each answer, as the server writes it, decodes into its type and
// encodes back to the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		into any
		json string
	}{
		{&api.Written{}, `{"written":2}`},
		{&api.Page{}, `{"events":[{"time":"2017-04-10T12:00:00.123456Z","series":"car-17","id":"e1","fields":{"gear":"D","speed":88.5}},{"time":"2017-04-10T12:01:00Z","id":"e2","fields":{"n":{"a":[1,"x",null,true]}}}],"next_cursor":"AQ"}`},
		{&api.Page{}, `{"events":[]}`},
		{&api.Aggregate{}, `{"buckets":[{"start":"2017-04-10T12:00:00Z","end":"2017-04-10T12:30:00.000000001Z","partial":true,"events":5,"values":{"speed":{"avg":82,"count":5,"first":"x","sum":410.5}}}],"rollups":"not used: a filter"}`},
		{&api.Aggregate{}, `{"buckets":[]}`},
		{&api.Aggregate{}, `{"groups":[{"group":"car-17","buckets":[{"start":"2017-04-10T12:00:00Z","end":"2017-04-10T13:00:00Z","events":0,"values":{}}]},{"group":"car-18","buckets":[]}],"next_group":"car-18"}`},
		{&api.Aggregate{}, `{"groups":[]}`},
		{&api.LogicalTables{}, `{"tables":[{"name":"cars","family":"events","created":"2017-04-10T12:00:00.5Z","first":"2017-04-10T12:00:00Z","last":"2017-04-10T12:04:00Z"},{"name":"old","family":"events"}]}`},
		{&api.SeriesPage{}, `{"series":["car-17","car-18"],"next_cursor":"Y2FyLTE4"}`},
		{&api.SeriesPage{}, `{"series":[]}`},
		{&api.Tenants{}, `{"tenants":[{"name":"acme","created":"2017-04-10T13:00:00Z"}]}`},
		{&api.TenantAdded{}, `{"key":{"id":"k1","tenant":"acme","scope":"all","created":"2017-04-10T13:00:00Z","state":"live","secret":"tt_x"},"tenant":{"name":"acme","created":"2017-04-10T13:00:00Z"}}`},
		{&api.TenantRemoved{}, `{"data":"kept","removed":"acme"}`},
		{&api.TenantRemoved{}, `{"data":"deleted","items":0,"removed":"acme","tables":[]}`},
		{&api.TenantRemoved{}, `{"data":"deleted","items":12,"removed":"acme","tables":["tt_events_2017-04-10"]}`},
		{&api.Keys{}, `{"keys":[{"id":"k1","tenant":"acme","scope":"read","created":"2017-04-10T13:00:00Z","expires":"2017-04-10T14:00:00Z","state":"expiring"}]}`},
		{&api.Key{}, `{"id":"k1","tenant":"acme","scope":"read","created":"2017-04-10T13:00:00.123Z","state":"revoked"}`},
		{&api.KeyRotated{}, `{"key":{"id":"k2","tenant":"acme","scope":"all","created":"2017-04-10T13:00:00Z","state":"live","secret":"tt_y"},"old":{"id":"k1","tenant":"acme","scope":"all","created":"2017-04-10T12:00:00Z","expires":"2017-04-11T13:00:00Z","state":"expiring"}}`},
		{&api.PhysicalTables{}, `{"tables":[{"name":"tt_events_2017-04-10","family":"events","period_start":"2017-04-10T00:00:00Z","period_end":"2017-04-11T00:00:00Z","write_month":null,"tier":"hot","why":"age 13h","state":"active","generation":1,"shards":1,"layout":"row","id_scheme":2,"created_at":"2017-04-10T12:00:00Z","source":"created","status":"ACTIVE","billing":"PAY_PER_REQUEST","read_capacity":0,"write_capacity":0,"item_count":5},{"name":"tt_events_2017-04-11_w2017-05","family":"events","period_start":"2017-04-11T00:00:00Z","period_end":"2017-04-12T00:00:00Z","write_month":"2017-05","tier":"cold","why":"","state":"missing","generation":2,"shards":4,"layout":"map","id_scheme":1,"created_at":"","source":"name","status":"","billing":"PROVISIONED","read_capacity":5,"write_capacity":1,"item_count":null,"create_error":"quota"}]}`},
		{&api.LastCycle{}, `{"last_cycle":null}`},
		{&api.LastCycle{}, `{"last_cycle":{"start":"2017-04-10T13:00:00Z","end":"2017-04-10T13:00:00.5Z","outcome":"failed","error":"timetable: lifecycle actions failed","actions":[{"action":"create","family":"events","table":"tt_events_2017-04-11","period":"2017-04-11T00:00:00Z/2017-04-12T00:00:00Z","write_month":"2017-04","tier":"hot","billing":"PROVISIONED","read":5,"write":5,"reason":"prebuild","result":"failed: no"}]}}`},
		{&api.Plan{}, `{"actions":[{"action":"ttl","family":"events","table":"t","period":"p","tier":"cold","reason":"r","result":"dry-run"}]}`},
		{&api.Plan{}, `{"actions":[]}`},
		{&api.Planner{}, `{"report":{"monthly_cost":1.5,"tiers":[{"name":"hot"}]},"svg":"\u003csvg\u003e\u003c/svg\u003e"}`},
		{&api.Health{}, `{"status":"ok"}`},
		{&api.Health{}, `{"reason":"the store did not answer in 2s","status":"unavailable"}`},
		{&api.InfluxPing{}, `{"version":"1.8.10"}`},
		{&api.ErrorBody{}, `{"error":"timetable: invalid event: 1 bad event","problems":[{"index":0,"reason":"time: not RFC 3339"}]}`},
		{&api.ErrorBody{}, `{"error":"unable to parse","lines":[{"line":2,"text":"cpu x","reason":"bad"},{"line":3,"reason":"worse"}],"code":"invalid","message":"unable to parse"}`},
		{&api.ErrorBody{}, `{"error":"timetable: store unavailable; retry the request (request id 1)","written":0,"unwritten":[0,1]}`},
	} {
		t.Run(reflect.TypeOf(c.into).Elem().Name(), func(t *testing.T) {
			dec := json.NewDecoder(bytes.NewReader([]byte(c.json)))
			dec.UseNumber()
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(c.into))
			b, err := json.Marshal(c.into)
			require.NoError(t, err)
			require.Equal(t, c.json, string(b))
		})
	}
}

// A request's parameters are those the server reads.
func TestValues(t *testing.T) {
	after := "car-17"
	for _, c := range []struct {
		values interface{ Encode() string }
		want   string
	}{
		{api.Query{}.Values(), ``},
		{api.Query{Series: "a b", Desc: true, Limit: 2, Cursor: "c", Fields: []string{"x", "y"}, Filter: "x > 1"}.Values(), `cursor=c&fields=x%2Cy&filter=x+%3E+1&limit=2&order=desc&series=a+b`},
		{api.AggregateQuery{Bucket: "1h", Funcs: []string{"count"}, Fill: true, GroupBy: "series", GroupLimit: 10, GroupAfter: &after}.Values(), `bucket=1h&fill=true&fn=count&group_after=car-17&group_by=series&group_limit=10`},
		{api.SeriesQuery{Prefix: "car", Limit: 5, Cursor: "Y2Fy"}.Values(), `cursor=Y2Fy&limit=5&prefix=car`},
		{api.PlannerQuery{Rate: 1.5, Peak: 10, ItemBytes: 200, Retention: "90d", Series: 3}.Values(), `item_bytes=200&peak=10&rate=1.5&retention=90d&series=3`},
		{api.RemoveTenantValues(api.DataKeep), `data=keep`},
	} {
		require.Equal(t, c.want, c.values.Encode())
	}
}
