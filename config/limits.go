package config

import (
	"fmt"

	"github.com/timetabledb/timetable/api"
)

// Limits are the server's budgets and per-request limits, and the
// limits of a tenant without overrides (YAML "limits"). A zero field
// means the server's default (server.Options, whose fields they fill;
// docs/configuration.md lists them with their defaults).
type Limits struct {
	// MaxBodyBytes bounds a request body or MQTT message (YAML
	// "max_body_bytes").
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxEvents bounds the events of a request or MQTT message (YAML
	// "max_events").
	MaxEvents int `yaml:"max_events"`
	// MaxBodyBytesInFlight is the budget of request body bytes (YAML
	// "max_body_bytes_in_flight").
	MaxBodyBytesInFlight int64 `yaml:"max_body_bytes_in_flight"`
	// MaxEventBytesInFlight is the budget of decoded events, HTTP and
	// MQTT together (YAML "max_event_bytes_in_flight").
	MaxEventBytesInFlight int64 `yaml:"max_event_bytes_in_flight"`
	// TenantShare is the part of each budget one tenant may hold (YAML
	// "tenant_share").
	TenantShare float64 `yaml:"tenant_share"`
	// TenantNamesInMetrics labels the per-tenant metrics with names
	// rather than hashes (YAML "tenant_names_in_metrics").
	TenantNamesInMetrics bool `yaml:"tenant_names_in_metrics"`
	// Tenant are the limits of a tenant without overrides (YAML
	// "tenant"); the admin API sets a tenant's own.
	Tenant api.TenantLimits `yaml:"tenant"`
}

// validate refuses a negative field, or a share above 1.
func (l Limits) validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max_body_bytes", l.MaxBodyBytes}, {"max_events", int64(l.MaxEvents)},
		{"max_body_bytes_in_flight", l.MaxBodyBytesInFlight}, {"max_event_bytes_in_flight", l.MaxEventBytesInFlight},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: limits: %s is negative", ErrInvalid, f.name)
		}
	}
	if l.TenantShare < 0 || l.TenantShare > 1 {
		return fmt.Errorf("%w: limits: tenant_share %v is not between 0 and 1", ErrInvalid, l.TenantShare)
	}
	if err := l.Tenant.Validate(); err != nil {
		return fmt.Errorf("%w: limits: tenant: %v", ErrInvalid, err)
	}
	return nil
}
