package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
)

func TestMQTTSubscriptions(t *testing.T) {
	c, err := config.Parse([]byte(`
mqtt:
  - broker: tcp://127.0.0.1:1883
    topic: plant/+/telemetry
    tenant: acme
    table: telemetry
    series: 2
    format: json
  - broker: ssl://broker.example:8883
    topic: gw/#
    tenant: acme
    format: line
    client_id: gw-ingest
    username: ingest
    password: secret
    tls: {ca: ca.pem, server_name: broker.example}
    dead_letter: dead/gw
`))
	require.NoError(t, err)
	require.Len(t, c.MQTT, 2)
	first := c.MQTT[0]
	require.Equal(t, config.Subscription{Broker: "tcp://127.0.0.1:1883", Topic: "plant/+/telemetry", Tenant: "acme", Table: "telemetry", Series: 2, Format: config.FormatJSON, ClientID: first.ClientID}, first)
	require.Regexp(t, `^timetable-[0-9a-f]{12}$`, first.ClientID, "a stable id derived from the subscription")
	again, err := config.Parse([]byte("mqtt: [{broker: 'tcp://127.0.0.1:1883', topic: plant/+/telemetry, tenant: acme, table: telemetry}]"))
	require.NoError(t, err)
	require.Equal(t, first.ClientID, again.MQTT[0].ClientID)
	require.Equal(t, config.FormatLine, c.MQTT[1].Format)
	require.Equal(t, "gw-ingest", c.MQTT[1].ClientID)
	require.Equal(t, config.TLS{CA: "ca.pem", ServerName: "broker.example"}, c.MQTT[1].TLS)
}

func TestInvalidMQTTSubscriptions(t *testing.T) {
	base := "broker: tcp://h:1883, topic: a/+/c, tenant: acme, table: t"
	for yaml, want := range map[string]string{
		"{topic: a, tenant: acme, table: t}":                       "broker: required",
		"{broker: 'http://h', topic: a, tenant: a, table: t}":      "use tcp://",
		"{broker: 'tcp://h:1', tenant: acme, table: t}":            "topic: required",
		"{broker: 'tcp://h:1', topic: a/b+, tenant: a, table: t}":  "whole levels",
		"{broker: 'tcp://h:1', topic: '#/a', tenant: a, table: t}": "only for the last",
		"{broker: 'tcp://h:1', topic: a, table: t}":                "tenant: required",
		"{broker: 'tcp://h:1', topic: a, tenant: a}":               "table: required with format json",
		"{" + base + ", format: xml}":                              `format "xml"`,
		"{" + base + ", series: 4}":                                "has 3 levels",
		"{" + base + ", series: 2, series_field: d}":               "give one",
		"{" + base + ", format: line, series_field: d}":            "only with format json",
		"{" + base + ", dead_letter: a/x/c}":                       "dead letters would come back",
		"{" + base + ", dead_letter: a/+}":                         "without wildcards",
		"{" + base + ", tls: {cert: c.pem}}":                       "cert and key go together",
	} {
		_, err := config.Parse([]byte("mqtt: [" + yaml + "]"))
		require.ErrorIs(t, err, config.ErrInvalid, yaml)
		require.ErrorContains(t, err, want, yaml)
	}
	_, err := config.Parse([]byte("mqtt: [{" + base + ", client_id: x}, {" + base + ", format: line, client_id: x}]"))
	require.ErrorContains(t, err, `one client_id "x" on one broker`)
}

func TestTopicMatches(t *testing.T) {
	for _, c := range []struct {
		filter, topic string
		want          bool
	}{
		{"a/+/c", "a/b/c", true}, {"a/+/c", "a/b/d", false}, {"a/+/c", "a/b/c/d", false},
		{"a/#", "a", true}, {"a/#", "a/b/c", true}, {"#", "x/y", true}, {"#", "$SYS/x", false},
		{"+/x", "$SYS/x", false}, {"a/b", "a/b", true}, {"a/b", "a", false}, {"+", "", true},
	} {
		require.Equal(t, c.want, config.TopicMatches(c.filter, c.topic), "%s ~ %s", c.filter, c.topic)
	}
}
