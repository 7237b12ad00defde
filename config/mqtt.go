package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Subscription is an MQTT subscription of `timetable serve` (YAML
// "mqtt", a list): the messages of a topic filter on a broker, written to
// a tenant's logical table (see package mqttsub).
//
//	mqtt:
//	  - broker: tcp://127.0.0.1:1883   # tcp:// or mqtt://; ssl://, tls:// or mqtts:// with TLS; ws://, wss://
//	    topic: plant/+/telemetry       # an MQTT topic filter
//	    tenant: acme
//	    table: telemetry               # required for json; for line, replaces the measurement
//	    series: 2                      # the topic level (1-based) naming the series
//	    # series_field: device         # or the payload's field naming it (json)
//	    format: json                   # json (one event, an array, or NDJSON) or line
//	    client_id: timetable-plant     # default: derived from broker, topic, tenant and table
//	    username: ingest
//	    password: secret
//	    tls: {ca: ca.pem, cert: client.pem, key: client.key, server_name: broker.example, insecure_skip_verify: false}
//	    dead_letter: plant/dead-letter # where invalid messages go; default: nowhere (they are logged and counted)
type Subscription struct {
	Broker      string
	Topic       string
	Tenant      string
	Table       string
	Series      int
	SeriesField string
	Format      Format
	ClientID    string
	Username    string
	Password    string
	TLS         TLS
	DeadLetter  string
}

// TLS configures the TLS of an ssl://, tls://, mqtts:// or wss:// broker;
// the zero value trusts the system's roots.
type TLS struct {
	// CA is a PEM file of the certificates that may sign the broker's.
	CA string `yaml:"ca"`
	// Cert and Key are PEM files of the client's certificate and key,
	// for brokers that authenticate clients by certificate.
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ServerName is the name the broker's certificate must hold, when not
	// the broker's host.
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify accepts any certificate: for tests only.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// Format is how an MQTT subscription reads message payloads.
type Format string

// Formats of MQTT payloads.
const (
	// FormatJSON reads timetable's JSON events: one object, an array, or
	// NDJSON.
	FormatJSON Format = "json"
	// FormatLine reads InfluxDB line protocol.
	FormatLine Format = "line"
)

type fileSubscription struct {
	Broker      string `yaml:"broker"`
	Topic       string `yaml:"topic"`
	Tenant      string `yaml:"tenant"`
	Table       string `yaml:"table"`
	Series      int    `yaml:"series"`
	SeriesField string `yaml:"series_field"`
	Format      string `yaml:"format"`
	ClientID    string `yaml:"client_id"`
	Username    string `yaml:"username"`
	Password    string `yaml:"password"`
	TLS         TLS    `yaml:"tls"`
	DeadLetter  string `yaml:"dead_letter"`
}

func (fs fileSubscription) subscription() Subscription {
	s := Subscription{
		Broker: fs.Broker, Topic: fs.Topic, Tenant: fs.Tenant, Table: fs.Table,
		Series: fs.Series, SeriesField: fs.SeriesField, Format: Format(fs.Format),
		ClientID: fs.ClientID, Username: fs.Username, Password: fs.Password,
		TLS: fs.TLS, DeadLetter: fs.DeadLetter,
	}
	if s.Format == "" {
		s.Format = FormatJSON
	}
	if s.ClientID == "" {
		sum := sha256.Sum256([]byte(strings.Join([]string{s.Broker, s.Topic, s.Tenant, s.Table}, "\x00")))
		s.ClientID = "timetable-" + hex.EncodeToString(sum[:6])
	}
	return s
}

// brokerSchemes are the broker URL schemes of the MQTT client.
var brokerSchemes = []string{"tcp", "mqtt", "ssl", "tls", "mqtts", "ws", "wss"}

// Validate reports what is wrong with a subscription, if anything.
func (s Subscription) Validate() error {
	u, err := url.Parse(s.Broker)
	switch {
	case s.Broker == "":
		return fmt.Errorf("broker: required, e.g. tcp://127.0.0.1:1883")
	case err != nil:
		return fmt.Errorf("broker %q: %v", s.Broker, err)
	case !slices.Contains(brokerSchemes, u.Scheme) || u.Host == "":
		return fmt.Errorf("broker %q: use %s://host:port", s.Broker, strings.Join(brokerSchemes, "://, ")+"://")
	}
	levels, err := filterLevels(s.Topic)
	if err != nil {
		return err
	}
	if s.Tenant == "" {
		return fmt.Errorf("tenant: required")
	}
	switch s.Format {
	case FormatJSON:
		if s.Table == "" {
			return fmt.Errorf("table: required with format json")
		}
	case FormatLine:
		if s.SeriesField != "" {
			return fmt.Errorf("series_field: only with format json; a line's series is its tag set, or the topic level series names")
		}
	default:
		return fmt.Errorf("format %q: must be json or line", s.Format)
	}
	if s.Series < 0 {
		return fmt.Errorf("series %d: a topic level, 1 for the first", s.Series)
	}
	if s.Series > 0 && s.SeriesField != "" {
		return fmt.Errorf("series and series_field: give one")
	}
	if s.Series > len(levels) && levels[len(levels)-1] != "#" {
		return fmt.Errorf("series %d: topic %q has %d levels", s.Series, s.Topic, len(levels))
	}
	if s.DeadLetter != "" {
		if strings.ContainsAny(s.DeadLetter, "+#") {
			return fmt.Errorf("dead_letter %q: a topic, without wildcards", s.DeadLetter)
		}
		if TopicMatches(s.Topic, s.DeadLetter) {
			return fmt.Errorf("dead_letter %q: matched by topic %q, so dead letters would come back", s.DeadLetter, s.Topic)
		}
	}
	if (s.TLS.Cert == "") != (s.TLS.Key == "") {
		return fmt.Errorf("tls: cert and key go together")
	}
	return nil
}

// filterLevels returns the levels of a topic filter, refusing one MQTT
// refuses: empty, or with a wildcard that is not a whole level, or a
// "#" that is not the last.
func filterLevels(filter string) ([]string, error) {
	if filter == "" {
		return nil, fmt.Errorf("topic: required, an MQTT topic filter such as plant/+/telemetry")
	}
	levels := strings.Split(filter, "/")
	for i, l := range levels {
		if (strings.ContainsAny(l, "+#") && len(l) > 1) || (l == "#" && i != len(levels)-1) {
			return nil, fmt.Errorf("topic %q: + and # stand for whole levels, and # only for the last", filter)
		}
	}
	return levels, nil
}

// TopicMatches reports whether a topic filter matches a topic name, as
// an MQTT broker matches them (a filter starting with a wildcard does not
// match a topic starting with $).
func TopicMatches(filter, topic string) bool {
	if strings.HasPrefix(topic, "$") && (strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")) {
		return false
	}
	f, t := strings.Split(filter, "/"), strings.Split(topic, "/")
	for i, l := range f {
		switch {
		case l == "#":
			return true
		case i >= len(t):
			return false
		case l != "+" && l != t[i]:
			return false
		}
	}
	return len(f) == len(t)
}
