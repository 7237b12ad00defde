package mqttsub_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
)

// weeks is a JSON message of an event in each of n weeks, the first
// weeks before now.
func weeks(first, n int) string {
	var evs []string
	for w := range n {
		at := now.Add(-time.Hour - time.Duration(first+w)*7*24*time.Hour)
		evs = append(evs, fmt.Sprintf(`{"time":%q,"fields":{"w":%d}}`, at.Format(time.RFC3339), first+w))
	}
	return "[" + strings.Join(evs, ",") + "]"
}

// A message the table budget refuses is dead-lettered with the reason,
// whether no retry cures it (more new tables than one request may make)
// or only the next hour does (the tenant's new tables of the hour
// spent), and the messages after it are written: the subscription never
// waits on it. Messages that each fit the budget are written, though
// together they would not.
func TestTableBudgetRefusalsAreDeadLettered(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			f := newFixtureOn(t, b, engine.TableBudget{BackfillHorizon: engine.NoBackfillHorizon, MaxNewTablesPerRequest: 3, MaxNewTablesPerTenantHour: 5})
			letters := f.deadLetters("dead/plant")
			_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, DeadLetter: "dead/plant", Format: config.FormatJSON})
			f.publishLines("plant/dev1/telemetry",
				weeks(10, 4), // four new tables: over the request's three
				weeks(0, 1),  // one
				weeks(20, 3), // three more: four in the hour
				weeks(30, 2), // two more: over the hour's five
				weeks(0, 1),  // none
			)

			var reasons []string
			for range 2 {
				select {
				case l := <-letters:
					require.NotEmpty(t, l["payload"])
					reasons = append(reasons, l["reason"].(string))
				case <-time.After(20 * time.Second):
					t.Fatalf("only %d dead letters: %q", len(reasons), reasons)
				}
			}
			require.Contains(t, reasons[0], "4 new physical tables, over the 3 a request may make (new_tables.per_request")
			require.Contains(t, reasons[1], "the tenant made 4 in the hour since 2026-11-23T09:00:00Z, of the 5 it may (new_tables.per_tenant_hour")
			require.Contains(t, reasons[1], "may make new tables again in 1h0m0s: publish the message again then")
			f.eventually("wrote the others", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "written") == 3 })
			require.Equal(t, float64(2), metric(t, reg, "timetable_mqtt_messages_total", "refused"))
			require.Zero(t, metric(t, reg, "timetable_mqtt_messages_total", "invalid"))
			written := map[string]int{}
			for _, e := range f.eventsSince("telemetry", now.Add(-60*7*24*time.Hour)) {
				written[fmt.Sprint(e["fields"].(map[string]any)["w"])]++
			}
			require.Equal(t, map[string]int{"0": 1, "20": 1, "21": 1, "22": 1}, written)
		})
	}
}
