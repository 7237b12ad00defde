package mqttsub_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
)

// A message whose numbers take 25 times their text decoded (1e125 is
// 126 digits), past event.DecodedTextBound, is refused like any invalid
// message: dead-lettered with the reason, naming the limit, and
// acknowledged; the message after it, whose numbers have exponents too
// but within the bound, is written and reads back exactly.
func TestAMessageWhoseNumbersExpandPastTheBoundIsDeadLettered(t *testing.T) {
	f := newFixture(t)
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

	expanding := event(1, `,"v":[`+strings.Repeat("1e125,", 150)+`1e125]`)
	ndjson := strings.Repeat(expanding+"\n", 100)
	array := "[" + strings.Repeat(expanding+",", 99) + expanding + "]"
	f.publish("plant/dev1/telemetry", ndjson, array, event(2, `,"a":1e20,"b":1.5e-7`))

	for i := range 2 {
		select {
		case l := <-letters:
			require.Contains(t, l["reason"], "too large decoded", "letter %d", i)
			require.Contains(t, l["reason"], "twice the body", "letter %d", i)
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d dead letters", i)
		}
	}
	f.eventually("wrote the valid message", func() bool { return len(f.events("telemetry")) == 1 })
	got := f.events("telemetry")[0]
	fields, _ := got["fields"].(map[string]any)
	require.Equal(t, json.Number("100000000000000000000"), fields["a"], "event: %v", got)
	require.Equal(t, json.Number("0.00000015"), fields["b"], "event: %v", got)
	f.eventually("counted", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 2 })
}
