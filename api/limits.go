package api

// TenantLimits are a tenant's limits: the body of PUT
// /v1/admin/tenants/{tenant}/limits, which replaces the tenant's
// overrides, and in the answers the overrides and the limits in force. A
// zero (absent) field is the server's default.
type TenantLimits struct {
	// WriteEventsPerSecond is the events the tenant may write a second,
	// with bursts of WriteEventsBurst.
	WriteEventsPerSecond float64 `json:"write_events_per_second,omitempty"`
	WriteEventsBurst     int     `json:"write_events_burst,omitempty"`
	// WriteBytesPerSecond is the request body bytes the tenant may write
	// a second, with bursts of WriteBytesBurst.
	WriteBytesPerSecond float64 `json:"write_bytes_per_second,omitempty"`
	WriteBytesBurst     int     `json:"write_bytes_burst,omitempty"`
	// MaxConcurrentQueries is the queries and aggregates the tenant may
	// run at once.
	MaxConcurrentQueries int `json:"max_concurrent_queries,omitempty"`
	// MaxQueryPartitions is the partitions the tenant's reads of every
	// series and its InfluxQL answers (2 KiB a partition) may hold at
	// once, out of the server's query budget.
	MaxQueryPartitions int `json:"max_query_partitions,omitempty"`
	// MaxConcurrentWrites is the write requests of the tenant a server
	// works on at once.
	MaxConcurrentWrites int `json:"max_concurrent_writes,omitempty"`
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
