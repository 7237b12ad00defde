package mqttsub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/internal/metricstest"
	"github.com/timetabledb/timetable/mqttsub"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// now is the engine's clock; events are stamped around it.
var now = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// fixture is an engine on Pebble with the tenant acme, and a mosquitto
// broker.
type fixture struct {
	t      *testing.T
	db     *engine.DB
	store  storage.Store
	cfg    family.Schema
	broker *clients.Broker
	pub    string // mosquitto_pub
	// opts are the options start starts subscribers with.
	opts mqttsub.Options
	// budget is the engine's table budget.
	budget engine.TableBudget
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, backends.Pebble(), engine.TableBudget{})
}

// newFixtureOn is newFixture on backend b, the engine with a table
// budget.
func newFixtureOn(t *testing.T, b backends.Backend, budget engine.TableBudget) *fixture {
	t.Helper()
	f := &fixture{t: t, pub: clients.Command(t, "mosquitto_pub"), budget: budget}
	broker, err := clients.StartMosquitto(clients.Command(t, "mosquitto"), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(broker.Close)
	f.broker = broker
	f.store, f.cfg = b.Open(t)
	f.open()
	f.opts.TenantDirectory = tenant.New(f.store, f.db.Options().Schema.MetaTable, tenant.Options{Clock: f.db.Options().Clock})
	_, err = f.opts.TenantDirectory.Add(context.Background(), "acme", now)
	require.NoError(t, err)
	return f
}

// open opens an engine on the fixture's store.
func (f *fixture) open() {
	f.t.Helper()
	db, err := engine.Open(context.Background(), f.store, engine.Options{Schema: f.cfg, Clock: clock.NewManual(now), Tables: f.budget})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { db.Close() })
	f.db = db
}

// start starts a subscriber of one subscription and waits until it is
// subscribed; it returns the subscriber and its metrics' registry.
func (f *fixture) start(sub config.Subscription) (*mqttsub.Subscriber, *prometheus.Registry) {
	f.t.Helper()
	sub.Broker = f.broker.URL
	if sub.ClientID == "" {
		sub.ClientID = "timetable-test"
	}
	reg := prometheus.NewRegistry()
	opts := f.opts
	opts.Registerer, opts.RetryMin = reg, 10*time.Millisecond
	s, err := mqttsub.Start(context.Background(), f.db, []config.Subscription{sub}, opts)
	require.NoError(f.t, err)
	f.t.Cleanup(s.Close)
	f.eventually("subscribed", func() bool { return metric(f.t, reg, "timetable_mqtt_connected", "") == 1 })
	return s, reg
}

// publish sends each payload as a message of QoS 1 with mosquitto_pub.
func (f *fixture) publish(topic string, payloads ...string) {
	f.t.Helper()
	for _, p := range payloads {
		out, err := exec.Command(f.pub, "-h", "127.0.0.1", "-p", fmt.Sprint(f.broker.Port), "-q", "1", "-t", topic, "-m", p).CombinedOutput()
		require.NoError(f.t, err, "%s", out)
	}
}

// publishLines sends each line as a message of QoS 1, in one
// mosquitto_pub (-l).
func (f *fixture) publishLines(topic string, lines ...string) {
	f.t.Helper()
	cmd := exec.Command(f.pub, "-h", "127.0.0.1", "-p", fmt.Sprint(f.broker.Port), "-q", "1", "-t", topic, "-l")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	require.NoError(f.t, err, "%s", out)
}

// eventually waits for cond, polling, for at most 20 seconds: the
// broker and the subscriber work in their own goroutines.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	require.Eventually(f.t, cond, 20*time.Second, 50*time.Millisecond, "never %s", what)
}

// events returns every event of a table of acme of the two days before
// now.
func (f *fixture) events(table string) []map[string]any {
	f.t.Helper()
	return f.eventsSince(table, now.Add(-48*time.Hour))
}

// eventsSince returns every event of a table of acme since from.
func (f *fixture) eventsSince(table string, from time.Time) []map[string]any {
	f.t.Helper()
	var out []map[string]any
	q := engine.Query{Table: table, From: from, To: now.Add(time.Hour), Limit: 10000}
	page, err := f.db.Query(context.Background(), "acme", q)
	if err != nil {
		return nil
	}
	for _, e := range page.Events {
		out = append(out, map[string]any{"series": e.Series, "time": e.Time, "fields": e.Fields})
	}
	return out
}

// metric returns the value of a metric of reg whose labels include
// result (when not empty), summed over the others.
func metric(t *testing.T, reg *prometheus.Registry, name, result string) float64 {
	t.Helper()
	var labels map[string]string
	if result != "" {
		labels = map[string]string{"result": result}
	}
	return metricstest.Value(t, reg, name, labels)
}

// event is a JSON event at minute i after two hours before now.
func event(i int, extra string) string {
	return fmt.Sprintf(`{"time":%q,"fields":{"i":%d%s}}`, now.Add(-2*time.Hour+time.Duration(i)*time.Minute).Format(time.RFC3339), i, extra)
}

// Messages published while timetable is down are written once it is
// back, a message sent twice is stored once, and every message is found
// exactly once.
func TestEveryMessageOnceAcrossARestart(t *testing.T) {
	f := newFixture(t)
	sub := config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, Format: config.FormatJSON}
	s, reg := f.start(sub)

	var first []string
	for i := range 10 {
		first = append(first, event(i, ""))
	}
	f.publishLines("plant/dev1/telemetry", first[:5]...)
	f.publishLines("plant/dev2/telemetry", first[5:]...)
	// An array and NDJSON are several events in one message.
	f.publish("plant/dev1/telemetry", "["+event(10, "")+","+event(11, "")+"]", event(12, "")+"\n"+event(13, ""))
	f.eventually("wrote the first 14 events", func() bool { return len(f.events("telemetry")) == 14 })
	f.eventually("acknowledged the first 12 messages", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "written") == 12 })
	s.Close()

	// Down: the broker keeps the session's messages.
	var second []string
	for i := 20; i < 30; i++ {
		second = append(second, event(i, ""))
	}
	f.publishLines("plant/dev3/telemetry", second...)
	f.publish("plant/dev1/telemetry", first[0]) // sent twice
	// The broker has them (QoS 1), and Close has stopped the subscriber.
	require.Len(t, f.events("telemetry"), 14, "nothing is written while timetable is down")

	_, reg = f.start(sub)
	f.eventually("wrote the messages sent while down", func() bool {
		return metric(t, reg, "timetable_mqtt_messages_total", "written") == 11
	})
	events := f.events("telemetry")
	require.Len(t, events, 24)
	seen := map[string]int{}
	for _, e := range events {
		seen[fmt.Sprintf("%s@%v", e["series"], e["fields"].(map[string]any)["i"])]++
	}
	for key, n := range seen {
		require.Equal(t, 1, n, key)
	}
	require.Equal(t, 1, seen["dev1@0"])
	require.Equal(t, 1, seen["dev2@5"])
	require.Equal(t, 1, seen["dev3@29"])
}

// A message whose write fails is not acknowledged: the subscription
// retries it, and once timetable restarts the broker sends it again and
// it is written.
func TestAFailedWriteIsNotAcknowledged(t *testing.T) {
	f := newFixture(t)
	sub := config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, Format: config.FormatJSON}
	s, reg := f.start(sub)
	require.NoError(t, f.db.Close()) // every write now fails
	f.publish("plant/dev1/telemetry", event(1, ""))
	f.eventually("retried the write", func() bool { return metric(t, reg, "timetable_mqtt_write_failures_total", "") >= 2 })
	require.Zero(t, metric(t, reg, "timetable_mqtt_messages_total", ""), "nothing acknowledged")
	s.Close()

	f.open()
	_, reg = f.start(sub)
	f.eventually("wrote the redelivered message", func() bool { return len(f.events("telemetry")) == 1 })
	f.eventually("acknowledged it", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "written") == 1 })
}

// Invalid messages are counted, logged and dead-lettered with the
// reason, and the valid message after them is written all the same.
func TestInvalidMessagesGoToTheDeadLetterTopic(t *testing.T) {
	f := newFixture(t)
	letters := f.deadLetters("dead/plant")

	_, reg := f.start(config.Subscription{Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, DeadLetter: "dead/plant", Format: config.FormatJSON})
	f.publishLines("plant/dev1/telemetry",
		`not json`,
		event(1, `,"pk":1`),
		`{"time":"2026-11-23T08:00:00Z","series":"dev9"}`,
		event(2, ""),
	)
	f.publish("plant//telemetry", event(3, ""))

	var reasons []string
	for range 4 {
		select {
		case l := <-letters:
			require.Contains(t, []string{"plant/dev1/telemetry", "plant//telemetry"}, l["topic"])
			require.NotEmpty(t, l["payload"])
			reasons = append(reasons, l["reason"].(string))
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d dead letters: %q", len(reasons), reasons)
		}
	}
	require.Contains(t, reasons[0], "malformed")
	require.Contains(t, reasons[1], `fields: name "pk" is reserved`)
	require.Contains(t, reasons[2], `series "dev9", but its message names series "dev1"`)
	require.Contains(t, reasons[3], "level 2, the series, is empty")
	f.eventually("wrote the valid message", func() bool { return len(f.events("telemetry")) == 1 })
	f.eventually("counted", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 4 })
	require.Equal(t, float64(1), metric(t, reg, "timetable_mqtt_messages_total", "written"))
}

// deadLetters returns the letters published to topic from now on.
func (f *fixture) deadLetters(topic string) <-chan map[string]any {
	f.t.Helper()
	letters := make(chan map[string]any, 10)
	watcher := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(f.broker.URL).SetClientID("dead-letter-watcher"))
	require.NoError(f.t, waitToken(watcher.Connect()))
	f.t.Cleanup(func() { watcher.Disconnect(100) })
	require.NoError(f.t, waitToken(watcher.Subscribe(topic, 1, func(_ mqtt.Client, m mqtt.Message) {
		var v map[string]any
		_ = json.Unmarshal(m.Payload(), &v)
		letters <- v
	})))
	return letters
}

// Line protocol payloads: the measurement names the table unless the
// subscription names one, the topic level (or else the tag set) the
// series, and a message with a bad line is refused whole.
func TestLineProtocolMessages(t *testing.T) {
	f := newFixture(t)
	_, reg := f.start(config.Subscription{Topic: "lp/+/data", Tenant: "acme", Series: 2, Format: config.FormatLine})
	ns := now.Add(-time.Hour).UnixNano()
	f.publish("lp/gw1/data", fmt.Sprintf("cpu,core=0 usage=0.5 %d\ncpu,core=1 usage=0.25 %d\nmem free=1024i %d", ns, ns, ns))
	f.publish("lp/gw2/data", fmt.Sprintf("cpu,core=0 usage=0.75 %d\nmem free=", ns))
	f.eventually("wrote the good message", func() bool { return len(f.events("cpu")) == 2 && len(f.events("mem")) == 1 })
	f.eventually("refused the bad one", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "invalid") == 1 })
	cores := map[any]bool{}
	for _, e := range f.events("cpu") {
		require.Equal(t, "gw1", e["series"])
		cores[e["fields"].(map[string]any)["core"]] = true
	}
	require.Equal(t, map[any]bool{"0": true, "1": true}, cores, "tags are kept as fields")
}

// The series may come from a field of the payload.
func TestSeriesField(t *testing.T) {
	f := newFixture(t)
	f.start(config.Subscription{Topic: "things", Tenant: "acme", Table: "things", SeriesField: "device", Format: config.FormatJSON})
	f.publish("things", event(1, `,"device":"d-7"`), event(2, `,"device":8`))
	f.eventually("wrote both", func() bool { return len(f.events("things")) == 2 })
	require.Equal(t, "d-7", f.events("things")[0]["series"])
	require.Equal(t, "8", f.events("things")[1]["series"])
}

// Start refuses subscriptions it cannot serve.
func TestStartRefuses(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		sub  config.Subscription
		want string
	}{
		{config.Subscription{Topic: "t", Tenant: "nobody", Table: "t", Format: config.FormatJSON}, `tenant "nobody" does not exist`},
		{config.Subscription{Topic: "t", Tenant: "acme", Table: "no#hash", Format: config.FormatJSON}, "bad name"},
		{config.Subscription{Topic: "t", Tenant: "acme", Table: "t", Format: config.FormatJSON, TLS: config.TLS{CA: "/nonexistent.pem"}}, "tls: ca"},
	} {
		c.sub.Broker, c.sub.ClientID = f.broker.URL, "x"
		_, err := mqttsub.Start(context.Background(), f.db, []config.Subscription{c.sub}, mqttsub.Options{TenantDirectory: f.opts.TenantDirectory})
		require.ErrorIs(t, err, mqttsub.ErrInvalidOptions)
		require.ErrorContains(t, err, c.want)
	}
}

func waitToken(tok mqtt.Token) error {
	if !tok.WaitTimeout(10 * time.Second) {
		return fmt.Errorf("no answer within 10s")
	}
	return tok.Error()
}
