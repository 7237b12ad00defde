package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/clients"
)

// serve subscribes to the brokers of its configuration: timetable is
// stopped, messages are published meanwhile, and once it is started
// again every message is found exactly once.
func TestServeSubscribesToMQTT(t *testing.T) {
	pub := clients.Command(t, "mosquitto_pub")
	broker, err := clients.StartMosquitto(clients.Command(t, "mosquitto"), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(broker.Close)

	dir := t.TempDir()
	store := "--store=pebble:" + filepath.Join(dir, "data")
	mustRun(t, "", "tenant", "add", "acme", store)
	cfg := filepath.Join(dir, "timetable.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
mqtt:
  - broker: %s
    topic: plant/+/telemetry
    tenant: acme
    table: telemetry
    series: 2
    format: json
    client_id: timetable-serve-test
`, broker.URL)), 0o600))

	publish := func(topic string, from, to int) {
		var lines []string
		for i := from; i < to; i++ {
			lines = append(lines, fmt.Sprintf(`{"time":"2017-06-15T08:%02d:00Z","fields":{"i":%d}}`, i, i))
		}
		cmd := exec.Command(pub, "-h", "127.0.0.1", "-p", fmt.Sprint(broker.Port), "-q", "1", "-t", topic, "-l")
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	// serveUntil runs serve until it has acknowledged n messages as
	// written, publishing once it is subscribed, then stops it.
	serveUntil := func(n int, publishing func()) {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		var logs syncWriter
		g := &globals{storeSpec: "pebble:" + filepath.Join(dir, "data"), configPath: cfg}
		addr, served := startServeWith(t, ctx, g, serveOptions{}, &logs)
		require.Eventually(t, func() bool {
			return strings.Contains(metricsOf(addr), "\ntimetable_mqtt_connected{subscription=\"timetable-serve-test\"} 1\n")
		}, time.Minute, 10*time.Millisecond, "never subscribed: %s", logs.String())
		publishing()
		want := fmt.Sprintf("\ntimetable_mqtt_messages_total{result=\"written\",subscription=\"timetable-serve-test\"} %d\n", n)
		require.Eventually(t, func() bool { return strings.Contains(metricsOf(addr), want) }, time.Minute, 10*time.Millisecond, "never wrote %d messages: %s", n, logs.String())
		stop()
		require.NoError(t, <-served)
	}

	serveUntil(5, func() { publish("plant/dev1/telemetry", 0, 5) })
	// timetable is down: the broker keeps the messages of its session.
	publish("plant/dev2/telemetry", 5, 10)
	publish("plant/dev1/telemetry", 4, 5) // sent twice
	serveUntil(6, func() {})

	events := queryJSON(t, store, "telemetry")
	require.Len(t, events, 10)
	seen := map[string]bool{}
	for _, e := range events {
		key := fmt.Sprintf("%v %v", e["series"], e["time"])
		require.False(t, seen[key], "twice: %s", key)
		seen[key] = true
	}
	require.True(t, seen["dev2 2017-06-15T08:09:00Z"], "%v", seen)
}

// metricsOf returns what GET /metrics answers, "" when it fails.
func metricsOf(addr string) string {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return ""
	}
	return string(b)
}
