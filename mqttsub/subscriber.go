package mqttsub

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/ingest"
	"github.com/timetabledb/timetable/tenant"
)

// Defaults of Options.
const (
	// DefaultMaxBatch bounds the messages written together.
	DefaultMaxBatch = 1000
	// DefaultRetryMin is the first wait before a write the store failed
	// is tried again; the wait doubles up to DefaultRetryMax.
	DefaultRetryMin = 100 * time.Millisecond
	// DefaultRetryMax is the longest wait between tries of a write.
	DefaultRetryMax = 5 * time.Second
	// DefaultPublishTimeout bounds the broker's acknowledgement of a dead
	// letter.
	DefaultPublishTimeout = 10 * time.Second
	// DefaultQuiesce is how long Close lets the client finish sending
	// before it disconnects.
	DefaultQuiesce = 250 * time.Millisecond
)

// Options configure a Subscriber. The zero value is the default for every
// field, as the Default constants say; a negative number or duration is
// an error.
type Options struct {
	// Logger receives connections, invalid messages and failed writes;
	// nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers them nowhere.
	Registerer prometheus.Registerer
	// MaxBatch bounds the messages written together. Zero means
	// DefaultMaxBatch.
	MaxBatch int
	// RetryMin and RetryMax bound the wait between tries of a write the
	// store failed. Zero means DefaultRetryMin and DefaultRetryMax.
	RetryMin, RetryMax time.Duration
	// PublishTimeout bounds the wait for the broker to take a dead
	// letter. Zero means DefaultPublishTimeout.
	PublishTimeout time.Duration
	// Quiesce is how long Close lets the client finish sending before
	// it disconnects. Zero means DefaultQuiesce.
	Quiesce time.Duration
	// MaxPayloadBytes bounds a message's payload, as the HTTP server's
	// MaxBodyBytes bounds a body; a larger message is invalid, and
	// dead-lettered without its payload. Zero means
	// admission.DefaultMaxRequestBytes.
	MaxPayloadBytes int64
	// MaxEvents bounds the events of one message, as the HTTP server's
	// MaxEvents bounds a request's; a message with more is invalid. Zero
	// means admission.DefaultMaxRequestEvents.
	MaxEvents int
	// EventBudget is the budget of decoded events, shared with the HTTP
	// server: a subscription waits for room in it before it decodes a
	// message, and so stops reading its broker while the budget is full
	// or its tenant holds its share. Nil means a budget of the
	// subscriber's own, of admission.DefaultMaxEventBytes.
	EventBudget *admission.Budget
	// Tenants keeps the tenants' write rates, shared with the HTTP
	// server: a subscription whose tenant is over its rate waits before
	// it writes, and so reads its broker more slowly. Nil means no rate.
	Tenants *admission.Tenants
	// TenantDirectory is the registry of tenants, shared with the HTTP
	// server: Start checks that each subscription's tenant is there.
	// Required.
	TenantDirectory *tenant.Directory
	// CPU is the pool of slots for heavy CPU work, shared with the HTTP
	// server: a subscription's writes count its tenant as active
	// (admission.CPU.Seen), so that the other tenants' heavy work leaves
	// it a core, and take a slot for decoding a message and another for
	// writing a batch, as the server's writes do. Nil means none.
	CPU *admission.CPU
}

// EnsureDefaults sets every zero field to its default.
func (o *Options) EnsureDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.RetryMin == 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax == 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.PublishTimeout == 0 {
		o.PublishTimeout = DefaultPublishTimeout
	}
	if o.Quiesce == 0 {
		o.Quiesce = DefaultQuiesce
	}
	if o.MaxPayloadBytes == 0 {
		o.MaxPayloadBytes = admission.DefaultMaxRequestBytes
	}
	if o.MaxEvents == 0 {
		o.MaxEvents = admission.DefaultMaxRequestEvents
	}
	if o.EventBudget == nil {
		o.EventBudget = admission.NewBudget("bytes of decoded events (max_event_bytes_in_flight)", admission.DefaultMaxEventBytes, admission.DefaultTenantShare)
	}
}

// ErrInvalidOptions marks Options or subscriptions that Start refuses.
var ErrInvalidOptions = errors.New("timetable: invalid MQTT subscription")

// Validate reports the fields that hold a negative number or duration.
func (o *Options) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBatch", int64(o.MaxBatch)}, {"RetryMin", int64(o.RetryMin)}, {"RetryMax", int64(o.RetryMax)},
		{"PublishTimeout", int64(o.PublishTimeout)}, {"Quiesce", int64(o.Quiesce)},
		{"MaxPayloadBytes", o.MaxPayloadBytes}, {"MaxEvents", int64(o.MaxEvents)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s is negative", ErrInvalidOptions, f.name)
		}
	}
	return nil
}

// Subscriber keeps a set of MQTT subscriptions, each writing to an
// engine, until Close.
type Subscriber struct {
	subs   []*subscription
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// subscription is one configured subscription: its client, and the
// writer of its messages.
type subscription struct {
	cfg     config.Subscription
	db      *engine.DB
	ingest  *ingest.Pipeline
	opts    Options
	log     *slog.Logger
	limits  event.Limits
	clock   clock.Clock
	client  mqtt.Client
	metrics subscriptionMetrics
	// in takes the messages the client receives to the writer; stop
	// ends the wait of a message for room in it.
	in   chan inbound
	stop chan struct{}
}

// Start checks the subscriptions (their tenants exist, their tables are
// table names, their TLS files load), connects them to their brokers,
// and writes their messages until Close; ctx bounds the checks only. A
// broker that cannot be reached is tried again in the background: Start
// does not wait for it.
func Start(ctx context.Context, db *engine.DB, subs []config.Subscription, opts Options) (*Subscriber, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.TenantDirectory == nil {
		return nil, fmt.Errorf("%w: TenantDirectory is nil", ErrInvalidOptions)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	// Every message goes through the write pipeline the HTTP server's
	// writes go through, in its modes that wait rather than refuse.
	pipeline, err := ingest.New(db, ingest.Options{TenantDirectory: opts.TenantDirectory, Limits: opts.Tenants, EventBudget: opts.EventBudget,
		CPU: opts.CPU, MaxEvents: opts.MaxEvents})
	if err != nil {
		return nil, err
	}
	tenants, err := opts.TenantDirectory.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("mqtt: list tenants: %w", err)
	}
	s := &Subscriber{}
	for i, cfg := range subs {
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("%w: mqtt[%d]: %v", ErrInvalidOptions, i, err)
		}
		if !slices.ContainsFunc(tenants, func(t tenant.Tenant) bool { return t.Name == cfg.Tenant }) {
			return nil, fmt.Errorf("%w: mqtt[%d]: tenant %q does not exist: add it with timetable tenant add", ErrInvalidOptions, i, cfg.Tenant)
		}
		if cfg.Table != "" {
			if err := db.CheckWrite(cfg.Tenant, cfg.Table, event.Batch{}); err != nil {
				return nil, fmt.Errorf("%w: mqtt[%d]: %v", ErrInvalidOptions, i, err)
			}
		}
		sub, err := newSubscription(db, pipeline, cfg, opts, m)
		if err != nil {
			return nil, fmt.Errorf("%w: mqtt[%d]: %v", ErrInvalidOptions, i, err)
		}
		s.subs = append(s.subs, sub)
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, sub := range s.subs {
		s.wg.Go(func() { sub.run(ctx) })
		sub.client.Connect() // completes in the background, retrying
		sub.log.Info("mqtt: subscribing", "broker", sub.cfg.Broker, "topic", sub.cfg.Topic, "tenant", sub.cfg.Tenant, "table", sub.cfg.Table)
	}
	return s, nil
}

// Close stops the subscriptions: messages not yet written stay
// unacknowledged, for the broker to send again on the next connection.
// It waits for the writes in progress, then disconnects. Closing again
// does nothing.
func (s *Subscriber) Close() {
	s.closed.Do(func() {
		s.cancel()
		for _, sub := range s.subs {
			close(sub.stop)
		}
		s.wg.Wait()
		for _, sub := range s.subs {
			sub.client.Disconnect(uint(sub.opts.Quiesce / time.Millisecond))
			sub.metrics.connected.Set(0)
		}
	})
}

func newSubscription(db *engine.DB, pipeline *ingest.Pipeline, cfg config.Subscription, opts Options, m *metrics) (*subscription, error) {
	sub := &subscription{
		cfg: cfg, db: db, ingest: pipeline, opts: opts,
		log:     opts.Logger.With("subscription", cfg.ClientID),
		metrics: m.of(cfg.ClientID),
		in:      make(chan inbound, opts.MaxBatch),
		stop:    make(chan struct{}),
	}
	sub.limits, sub.clock = db.Options().Limits, db.Options().Clock
	sub.limits.ReceiveTime = true
	co := mqtt.NewClientOptions().
		AddBroker(cfg.Broker).
		SetClientID(cfg.ClientID).
		SetUsername(cfg.Username).
		SetPassword(cfg.Password).
		SetCleanSession(false).
		SetOrderMatters(true).
		SetAutoAckDisabled(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(2 * time.Second).
		SetMaxReconnectInterval(30 * time.Second).
		// Messages of the session arrive before the subscription is
		// made again: every message of this client is the
		// subscription's.
		SetDefaultPublishHandler(sub.receive).
		SetOnConnectHandler(sub.subscribe).
		SetConnectionNotificationHandler(sub.notified)
	if u, err := url.Parse(cfg.Broker); err == nil && (slices.Contains([]string{"ssl", "tls", "mqtts", "wss"}, u.Scheme) || cfg.TLS != (config.TLS{})) {
		tc, err := tlsConfig(cfg.TLS)
		if err != nil {
			return nil, err
		}
		co.SetTLSConfig(tc)
	}
	sub.client = mqtt.NewClient(co)
	return sub, nil
}

// subscribe makes the subscription, on every connection.
func (s *subscription) subscribe(c mqtt.Client) {
	tok := c.Subscribe(s.cfg.Topic, 1, nil)
	if !tok.WaitTimeout(s.opts.PublishTimeout) {
		s.log.Error("mqtt: subscribe: no answer from the broker", "topic", s.cfg.Topic)
		return
	}
	if err := tok.Error(); err != nil {
		s.log.Error("mqtt: subscribe", "topic", s.cfg.Topic, "error", err)
		return
	}
	if st, ok := tok.(*mqtt.SubscribeToken); ok {
		if qos, ok := st.Result()[s.cfg.Topic]; ok && qos > 2 {
			s.log.Error("mqtt: the broker refused the subscription", "topic", s.cfg.Topic)
			return
		}
	}
	s.metrics.connected.Set(1)
	s.log.Info("mqtt: subscribed", "topic", s.cfg.Topic)
}

// notified logs the client's connections.
func (s *subscription) notified(_ mqtt.Client, n mqtt.ConnectionNotification) {
	switch n := n.(type) {
	case mqtt.ConnectionNotificationConnected:
		s.log.Info("mqtt: connected", "broker", s.cfg.Broker)
	case mqtt.ConnectionNotificationLost:
		s.metrics.connected.Set(0)
		s.log.Warn("mqtt: connection lost; reconnecting", "broker", s.cfg.Broker, "error", n.Reason)
	case mqtt.ConnectionNotificationFailed:
		s.log.Warn("mqtt: cannot connect; trying again", "broker", s.cfg.Broker, "error", n.Reason)
	}
}

// tlsConfig loads a subscription's TLS settings.
func tlsConfig(c config.TLS) (*tls.Config, error) {
	tc := &tls.Config{ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if c.CA != "" {
		pem, err := os.ReadFile(c.CA)
		if err != nil {
			return nil, fmt.Errorf("tls: ca: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: ca %s: no PEM certificate in it", c.CA)
		}
	}
	if c.Cert != "" {
		cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("tls: cert and key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
