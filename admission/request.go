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
	// it, that decoded events hold at once: 192 MiB, which holds a
	// request of DefaultMaxRequestEvents minimal events (about 1,000
	// bytes each, estimated, without fields; 1,600 with one) and one of
	// DefaultMaxRequestBytes of 180-byte events. A request whose events
	// are estimated at more is refused as too large (Budget.Fits).
	DefaultMaxEventBytes = 192 << 20
	// DefaultTenantShare is the part of each server-wide budget one
	// tenant may hold.
	DefaultTenantShare = 0.5
)
