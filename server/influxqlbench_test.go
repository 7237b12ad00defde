package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
)

// BenchmarkHourlyMean asks for the hourly mean of one series over 7 days,
// among 1000 series, through /v1/tables/…/aggregate and through InfluxQL
// on /query: the InfluxQL answer should cost no more than the engine's.
func BenchmarkHourlyMean(b *testing.B) {
	db, srv, key := benchServer(b)
	ctx := context.Background()
	to := now.Truncate(24 * time.Hour)
	from := to.Add(-7 * 24 * time.Hour)
	var evs []event.Event
	for s := range 1000 {
		n := 30
		if s == 17 {
			n = 7 * 24 * 2 // the series asked for: two readings an hour
		}
		for i := range n {
			at := from.Add(time.Duration(i) * (7 * 24 * time.Hour / time.Duration(n))).Add(time.Duration(s) * time.Second)
			evs = append(evs, event.Event{Time: at, Series: fmt.Sprintf("device-%04d", s), Fields: map[string]any{
				"temperature": json.Number(fmt.Sprintf("%d.25", 20+i%10)), "humidity": json.Number(fmt.Sprint(40 + i%30))}})
		}
		if len(evs) > 5000 {
			_, err := db.Write(ctx, "acme", "bench", evs)
			require.NoError(b, err)
			evs = evs[:0]
		}
	}
	_, err := db.Write(ctx, "acme", "bench", evs)
	require.NoError(b, err)
	for name, u := range map[string]string{
		"aggregate": srv.URL + "/v1/tables/bench/aggregate?" + url.Values{"series": {"device-0017"}, "bucket": {"1h"}, "fields": {"temperature"},
			"fn": {"avg"}, "from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}}.Encode(),
		"influxql": srv.URL + "/query?" + url.Values{"db": {"bench"}, "epoch": {"ms"}, "q": {fmt.Sprintf(
			`SELECT mean("temperature") FROM "bench" WHERE "series" = 'device-0017' AND time >= '%s' AND time < '%s' GROUP BY time(1h) fill(none)`,
			from.Format(time.RFC3339), to.Format(time.RFC3339))}}.Encode(),
	} {
		b.Run(name, func(b *testing.B) { getLoop(b, u, key, 168*20) })
	}
}
