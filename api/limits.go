package api

import (
	"errors"
	"fmt"
	"math"
)

// ErrBadTenantLimits is a TenantLimits with a negative or non-finite
// field.
var ErrBadTenantLimits = errors.New("timetable: bad tenant limits")

// TenantLimits are what one tenant may ask of a server: its write rates,
// its concurrent queries and writes. They are the one spelling of a
// tenant's limits: the body of PUT /v1/admin/tenants/{tenant}/limits,
// which replaces the tenant's overrides, and in the answers the overrides
// and the limits in force; the overrides kept with the tenant's record in
// the meta table (package tenant's Limits, the same type), so that every
// server on the store applies them; and the limits of a tenant without
// overrides in the configuration file (YAML "limits: tenant:"). A zero
// (absent) field is the server's default.
type TenantLimits struct {
	// WriteEventsPerSecond is the events the tenant may write a second,
	// over time, with bursts of WriteEventsBurst.
	WriteEventsPerSecond float64 `json:"write_events_per_second,omitempty" yaml:"write_events_per_second"`
	// WriteEventsBurst is the most events the tenant may write at once
	// after a quiet while.
	WriteEventsBurst int `json:"write_events_burst,omitempty" yaml:"write_events_burst"`
	// WriteBytesPerSecond is the request body bytes the tenant may write
	// a second, over time, with bursts of WriteBytesBurst.
	WriteBytesPerSecond float64 `json:"write_bytes_per_second,omitempty" yaml:"write_bytes_per_second"`
	// WriteBytesBurst is the most body bytes the tenant may write at
	// once after a quiet while.
	WriteBytesBurst int `json:"write_bytes_burst,omitempty" yaml:"write_bytes_burst"`
	// MaxConcurrentQueries is the queries and aggregates the tenant may
	// have running at once.
	MaxConcurrentQueries int `json:"max_concurrent_queries,omitempty" yaml:"max_concurrent_queries"`
	// MaxQueryPartitions is the partitions (one series' shard in one
	// physical table) that the tenant's reads of every series may hold
	// at once, across its queries and aggregates, out of the server's
	// query budget, and its InfluxQL answers at
	// engine.QueryPartitionBytes a partition.
	MaxQueryPartitions int `json:"max_query_partitions,omitempty" yaml:"max_query_partitions"`
	// MaxConcurrentWrites is the write requests of the tenant a server
	// works on at once; more wait briefly for a turn.
	MaxConcurrentWrites int `json:"max_concurrent_writes,omitempty" yaml:"max_concurrent_writes"`
}

// Validate returns an error wrapping ErrBadTenantLimits for a negative
// or non-finite field.
func (l TenantLimits) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"write_events_per_second", l.WriteEventsPerSecond},
		{"write_events_burst", float64(l.WriteEventsBurst)},
		{"write_bytes_per_second", l.WriteBytesPerSecond},
		{"write_bytes_burst", float64(l.WriteBytesBurst)},
		{"max_concurrent_queries", float64(l.MaxConcurrentQueries)},
		{"max_query_partitions", float64(l.MaxQueryPartitions)},
		{"max_concurrent_writes", float64(l.MaxConcurrentWrites)},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: %s is %v: use zero for the server's default, or a positive number", ErrBadTenantLimits, f.name, f.v)
		}
	}
	return nil
}

// Or returns l with each zero field taken from defaults.
func (l TenantLimits) Or(defaults TenantLimits) TenantLimits {
	if l.WriteEventsPerSecond == 0 {
		l.WriteEventsPerSecond = defaults.WriteEventsPerSecond
	}
	if l.WriteEventsBurst == 0 {
		l.WriteEventsBurst = defaults.WriteEventsBurst
	}
	if l.WriteBytesPerSecond == 0 {
		l.WriteBytesPerSecond = defaults.WriteBytesPerSecond
	}
	if l.WriteBytesBurst == 0 {
		l.WriteBytesBurst = defaults.WriteBytesBurst
	}
	if l.MaxConcurrentQueries == 0 {
		l.MaxConcurrentQueries = defaults.MaxConcurrentQueries
	}
	if l.MaxQueryPartitions == 0 {
		l.MaxQueryPartitions = defaults.MaxQueryPartitions
	}
	if l.MaxConcurrentWrites == 0 {
		l.MaxConcurrentWrites = defaults.MaxConcurrentWrites
	}
	return l
}

// TenantUsage is what a tenant's requests hold of the server answering,
// now.
type TenantUsage struct {
	// BodyBytes is what the tenant's request bodies hold of the body
	// budget, out of BodyBytesShare.
	BodyBytes      int64 `json:"body_bytes"`
	BodyBytesShare int64 `json:"body_bytes_share"`
	// EventBytes is what the tenant's decoded events hold of the events
	// budget (estimated), out of EventBytesShare.
	EventBytes      int64 `json:"event_bytes"`
	EventBytesShare int64 `json:"event_bytes_share"`
	// Queries is the queries and aggregates the tenant has running.
	Queries int `json:"queries"`
	// QueryPartitions is what the tenant's reads of every series hold of
	// the query budget, out of QueryPartitionsShare.
	QueryPartitions      int64 `json:"query_partitions"`
	QueryPartitionsShare int64 `json:"query_partitions_share"`
	// Writes is the write requests of the tenant the server works on.
	Writes int `json:"writes"`
}

// Limits is the answer of GET and PUT /v1/admin/tenants/{tenant}/limits,
// and a tenant's limits in the answer of GET /v1/admin/tenants.
type Limits struct {
	// Overrides are the limits the operator set for the tenant.
	Overrides TenantLimits `json:"overrides"`
	// Effective are the limits in force: the overrides over the
	// server's defaults.
	Effective TenantLimits `json:"effective"`
	// Usage is what the tenant holds of the server answering.
	Usage TenantUsage `json:"usage"`
	// MetricsLabel is the tenant's label value in the server's
	// per-tenant metrics.
	MetricsLabel string `json:"metrics_label"`
}
