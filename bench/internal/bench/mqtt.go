package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/clients"
	"github.com/timetabledb/timetable/mqttsub"
	"github.com/timetabledb/timetable/tenant"
)

// latencySamples is how many messages the publish-to-queryable latency
// is measured on, one at a time.
const latencySamples = 300

// MQTT measures ingest through a mosquitto broker on loopback, with its
// default settings: the events per second from the first publish until
// every event is written, each event one message of QoS 1 (a device's
// reading) published by one client, and the latency from publishing a
// message to its event being queryable, one message at a time. Without
// mosquitto it adds a note instead of the rows.
func MQTT(ctx context.Context, o Options, r *Report) error {
	path, err := exec.LookPath("mosquitto")
	if err != nil {
		r.Notes = append(r.Notes, "MQTT rows skipped: mosquitto is not installed (scripts/install-clients.sh installs it)")
		return nil
	}
	dir := filepath.Join(o.Dir, "mosquitto")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	broker, err := clients.StartMosquitto(path, dir)
	if err != nil {
		return err
	}
	defer broker.Close()
	gen := newGenerator(start, time.Millisecond)
	run := 0
	var p50, p99 float64
	eps, err := median(o.Runs, func() (float64, error) {
		run++
		eps, lat, err := mqttIngest(ctx, filepath.Join(o.Dir, fmt.Sprintf("mqtt-%d", run)), broker, gen, o.MQTTMessages, fmt.Sprintf("bench-%d", run))
		if err == nil && run == 1 {
			p50, p99 = percentile(lat, 50), percentile(lat, 99)
		}
		return eps, err
	})
	if err != nil {
		return err
	}
	raw, err := median(o.Runs, func() (float64, error) {
		run++
		return mqttRaw(broker, gen, o.MQTTMessages, fmt.Sprintf("bench-%d", run))
	})
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("MQTT ingest: %.0f ev/s (mosquitto alone %.0f), publish to queryable p50 %.2f ms, p99 %.2f ms", eps, raw, p50, p99))
	r.Rows = append(r.Rows,
		Row{Figure: "ingest, MQTT through mosquitto, 1 event per message (Pebble)", Value: eps, Unit: "ev/s", Baseline: "mosquitto alone, to a subscriber that only acknowledges", Base: raw},
		Row{Figure: "MQTT publish to queryable p50 (Pebble)", Value: p50, Unit: "ms"},
		Row{Figure: "MQTT publish to queryable p99 (Pebble)", Value: p99, Unit: "ms"})
	return nil
}

// mqttIngest publishes n events as n messages and waits until all are
// written, then measures the latency of latencySamples more. It returns
// the events per second and the latencies, sorted.
func mqttIngest(ctx context.Context, dir string, broker *clients.Broker, gen *generator, n int, client string) (float64, []time.Duration, error) {
	db, store, clk, err := openEngine(ctx, dir)
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(dir)
	defer store.Close()
	defer db.Close()
	clk.Set(start.Add(time.Duration(n+latencySamples) * time.Millisecond))
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	if _, err := tenants.Add(ctx, benchTenant, start); err != nil {
		return 0, nil, err
	}
	reg := prometheus.NewRegistry()
	sub := config.Subscription{Broker: broker.URL, Topic: "bench/+/data", Tenant: benchTenant, Table: benchTable, Series: 2, Format: config.FormatJSON, ClientID: client}
	s, err := mqttsub.Start(ctx, db, []config.Subscription{sub}, mqttsub.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler), Registerer: reg})
	if err != nil {
		return 0, nil, err
	}
	defer s.Close()
	if err := waitFor(ctx, func() bool { return gauge(reg, "timetable_mqtt_connected") == 1 }); err != nil {
		return 0, nil, fmt.Errorf("mqtt: never subscribed: %w", err)
	}
	pub := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL).SetClientID(client + "-pub"))
	if err := wait(pub.Connect()); err != nil {
		return 0, nil, fmt.Errorf("mqtt: publisher: %w", err)
	}
	defer pub.Disconnect(100)

	topics, payloads := make([]string, n), make([][]byte, n)
	for i := range n {
		topics[i], payloads[i] = message(gen.event(i))
	}
	begin := time.Now()
	tokens := make([]mqtt.Token, n)
	for i := range n {
		tokens[i] = pub.Publish(topics[i], 1, false, payloads[i])
	}
	for _, tok := range tokens {
		if err := wait(tok); err != nil {
			return 0, nil, fmt.Errorf("mqtt: publish: %w", err)
		}
	}
	if err := waitFor(ctx, func() bool { return gauge(reg, "timetable_mqtt_events_written_total") >= float64(n) }); err != nil {
		return 0, nil, fmt.Errorf("mqtt: the events were not all written: %w", err)
	}
	eps := rate(n, time.Since(begin))

	lat := make([]time.Duration, 0, latencySamples)
	for i := n; i < n+latencySamples; i++ {
		e := gen.event(i)
		topic, payload := message(e)
		sent := time.Now()
		pub.Publish(topic, 1, false, payload)
		q := engine.Query{Table: benchTable, Series: e.Series, From: e.Time, To: e.Time, Limit: 1}
		if err := waitFor(ctx, func() bool {
			page, err := db.Query(ctx, benchTenant, q)
			return err == nil && len(page.Events) == 1
		}); err != nil {
			return 0, nil, fmt.Errorf("mqtt: event %d never queryable: %w", i, err)
		}
		lat = append(lat, time.Since(sent))
	}
	slices.Sort(lat)
	return eps, lat, nil
}

// mqttRaw is the baseline of mqttIngest: the same messages through the
// same broker to a QoS 1 subscriber that only acknowledges them.
func mqttRaw(broker *clients.Broker, gen *generator, n int, client string) (float64, error) {
	done := make(chan struct{})
	var got int
	sub := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL).SetClientID(client + "-sub").
		SetDefaultPublishHandler(func(mqtt.Client, mqtt.Message) {
			if got++; got == n {
				close(done)
			}
		}))
	if err := wait(sub.Connect()); err != nil {
		return 0, fmt.Errorf("mqtt: subscriber: %w", err)
	}
	defer sub.Disconnect(100)
	if err := wait(sub.Subscribe("bench/+/data", 1, nil)); err != nil {
		return 0, fmt.Errorf("mqtt: subscribe: %w", err)
	}
	pub := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL).SetClientID(client + "-pub"))
	if err := wait(pub.Connect()); err != nil {
		return 0, fmt.Errorf("mqtt: publisher: %w", err)
	}
	defer pub.Disconnect(100)
	topics, payloads := make([]string, n), make([][]byte, n)
	for i := range n {
		topics[i], payloads[i] = message(gen.event(i))
	}
	begin := time.Now()
	for i := range n {
		pub.Publish(topics[i], 1, false, payloads[i])
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		return 0, errors.New("mqtt: the baseline's subscriber never got every message")
	}
	return rate(n, time.Since(begin)), nil
}

// message is the topic and payload of an event: its series in the topic,
// the rest as timetable's JSON.
func message(e event.Event) (string, []byte) {
	b, err := json.Marshal(map[string]any{"time": e.Time.Format(time.RFC3339Nano), "fields": e.Fields})
	if err != nil {
		panic(err)
	}
	return "bench/" + e.Series + "/data", b
}

// waitFor polls cond every 100µs for at most a minute.
func waitFor(ctx context.Context, cond func() bool) error {
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return errors.New("gave up after a minute")
		}
		time.Sleep(100 * time.Microsecond)
	}
	return nil
}

// wait waits for an MQTT token, for at most a minute.
func wait(tok mqtt.Token) error {
	if !tok.WaitTimeout(time.Minute) {
		return errors.New("no answer within a minute")
	}
	return tok.Error()
}

// gauge returns the sum of a metric of reg.
func gauge(reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}
