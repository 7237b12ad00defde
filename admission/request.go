package admission

// The limits of one request, whichever way it comes: an HTTP write's
// body and an MQTT message's payload alike.
const (
	// DefaultMaxRequestBytes bounds a request body or message payload:
	// 16 MiB, about 90,000 events of 180 bytes.
	DefaultMaxRequestBytes = 16 << 20
	// DefaultMaxRequestEvents bounds the events of one request or
	// message.
	DefaultMaxRequestEvents = 100_000
	// DefaultMaxEventBytes bounds the memory, as BatchBytes estimates
	// it, that decoded events hold at once: 192 MiB, of whose tenant
	// share (DefaultTenantShare) a request of DefaultMaxRequestEvents
	// minimal events (under 100 bytes each, estimated) and one of
	// DefaultMaxRequestBytes of any shape take a part, before decoding
	// (BodyBytes) and after (BatchBytes). A request whose events are
	// estimated at more than the budget is refused as too large
	// (Budget.Fits).
	DefaultMaxEventBytes = 192 << 20
	// DefaultTenantShare is the part of each server-wide budget one
	// tenant may hold.
	DefaultTenantShare = 0.5
)
