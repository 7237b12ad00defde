package mqttsub_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/tenant"
)

// A message over the per-message limits, bytes or events, is invalid:
// dead-lettered with its reason (without the payload, when that is what
// is too large) and acknowledged, and the messages after it are written.
func TestMessagesOverTheLimitsAreDeadLettered(t *testing.T) {
	f := newFixture(t)
	f.opts.MaxPayloadBytes, f.opts.MaxEvents = 2000, 3
	letters := make(chan map[string]any, 10)
	watcher := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(f.broker.URL).SetClientID("dead-letter-watcher"))
	require.NoError(t, waitToken(watcher.Connect()))
	t.Cleanup(func() { watcher.Disconnect(100) })
	require.NoError(t, waitToken(watcher.Subscribe("dead/plant", 1, func(_ mqtt.Client, m mqtt.Message) {
		var v map[string]any
		_ = json.Unmarshal(m.Payload(), &v)
		letters <- v
	})))
	_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, DeadLetter: "dead/plant", Format: config.FormatJSON})

	big := `{"time":"2026-11-23T08:00:00Z","fields":{"note":"` + strings.Repeat("x", 2000) + `"}}`
	four := strings.Join([]string{event(1, ""), event(2, ""), event(3, ""), event(4, "")}, "\n")
	f.publish("plant/dev1/telemetry", big, four, event(5, ""))

	var got []map[string]any
	for range 2 {
		select {
		case l := <-letters:
			got = append(got, l)
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d dead letters: %v", len(got), got)
		}
	}
	require.Contains(t, got[0]["reason"], "over the limit of 2000 bytes (max_body_bytes)")
	require.Nil(t, got[0]["payload"], "the payload over the limit is left out")
	require.Equal(t, float64(len(big)), got[0]["payload_bytes"])
	require.Contains(t, got[1]["reason"], "4 events in one message, over the limit of 3 (max_events)")
	require.NotEmpty(t, got[1]["payload"])
	f.eventually("wrote the valid message", func() bool { return len(f.events("telemetry")) == 1 })
	f.eventually("counted", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 2 })
}

// A message whose events are estimated at more than the whole events
// budget is invalid, dead-lettered naming max_event_bytes_in_flight,
// since no wait would let it in; the messages after it are written.
func TestAMessageLargerThanTheEventsBudgetIsDeadLettered(t *testing.T) {
	f := newFixture(t)
	f.opts.EventBudget = admission.NewBudget("bytes of decoded events (max_event_bytes_in_flight)", 64<<10, 1)
	letters := make(chan map[string]any, 10)
	watcher := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(f.broker.URL).SetClientID("dead-letter-watcher"))
	require.NoError(t, waitToken(watcher.Connect()))
	t.Cleanup(func() { watcher.Disconnect(100) })
	require.NoError(t, waitToken(watcher.Subscribe("dead/plant", 1, func(_ mqtt.Client, m mqtt.Message) {
		var v map[string]any
		_ = json.Unmarshal(m.Payload(), &v)
		letters <- v
	})))
	_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, DeadLetter: "dead/plant", Format: config.FormatJSON})

	wide := event(1, `,"a":[`+strings.Repeat("1,", 2000)+`1]`)
	f.publish("plant/dev1/telemetry", wide, event(2, ""))
	select {
	case l := <-letters:
		require.Contains(t, l["reason"], "max_event_bytes_in_flight")
		require.Contains(t, l["reason"], "split the message")
	case <-time.After(20 * time.Second):
		t.Fatal("no dead letter")
	}
	f.eventually("wrote the next message", func() bool { return len(f.events("telemetry")) == 1 })
	f.eventually("counted", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 1 })
	f.eventually("gave the budget back", func() bool { all, _ := f.opts.EventBudget.Used(""); return all == 0 })
}

// A subscription waits for room in the events budget before it decodes
// a message, and so reads nothing more from its broker while the budget
// is full; the message is written once there is room.
func TestAFullBudgetStopsReading(t *testing.T) {
	f := newFixture(t)
	f.opts.EventBudget = admission.NewBudget("bytes of decoded events", 1<<20, 1)
	// Another tenant holds the whole budget.
	require.NoError(t, f.opts.EventBudget.Acquire(t.Context(), "globex", 1<<20))
	_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, Format: config.FormatJSON})
	f.publish("plant/dev1/telemetry", event(1, ""), event(2, ""))
	f.eventually("received", func() bool { return metric(t, reg, "timetable_mqtt_messages_received_total", "") >= 1 })
	require.Empty(t, f.events("telemetry"), "nothing is decoded while the budget is full")
	all, acme := f.opts.EventBudget.Used("acme")
	require.Equal(t, int64(1<<20), all)
	require.Zero(t, acme)

	f.opts.EventBudget.Release("globex", 1<<20)
	f.eventually("wrote both messages", func() bool { return len(f.events("telemetry")) == 2 })
	f.eventually("gave the budget back", func() bool { all, _ := f.opts.EventBudget.Used(""); return all == 0 })
}

// A subscription whose tenant is over its write rate waits before it
// writes, reading nothing more meanwhile, and writes once the rate
// allows: nothing is refused or lost.
func TestATenantOverItsRateSlowsItsSubscription(t *testing.T) {
	f := newFixture(t)
	rates := clock.NewManual(now)
	f.opts.Tenants = admission.NewTenants(admission.TenantsOptions{
		Defaults: tenant.Limits{WriteEventsPerSecond: 1, WriteEventsBurst: 1},
		Clock:    rates,
	})
	_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, Format: config.FormatJSON})
	f.publish("plant/dev1/telemetry", event(1, ""))
	f.eventually("wrote the first", func() bool { return len(f.events("telemetry")) == 1 })
	f.publish("plant/dev1/telemetry", event(2, ""))
	// The second takes the next token, a second away by the rates'
	// clock, which stands still: a write of acme's now would wait two.
	// The subscription waits that second (admission's TestWaitWrite
	// shows the wait), then writes.
	f.eventually("took the next token", func() bool {
		var le *admission.LimitError
		return errors.As(f.opts.Tenants.AllowWrite(t.Context(), "acme", 1, 0), &le) && le.RetryAfter == 2*time.Second
	})
	f.eventually("wrote the second", func() bool { return len(f.events("telemetry")) == 2 })
	// A message is counted once its write returns, after its events
	// are readable.
	f.eventually("counted the second", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "written") == 2 })
	require.Zero(t, metric(t, reg, "timetable_mqtt_messages_total", "invalid"))
}
