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
	// it, that decoded events hold at once: 96 MiB. A request of
	// DefaultMaxRequestEvents minimal events (under 100 bytes each,
	// estimated) and one of DefaultMaxRequestBytes of any shape fit
	// within a tenant's share (DefaultTenantShare) once decoded
	// (BatchBytes), and within the budget before (BodyBytes), which
	// a request over its tenant's share gets in alone. A request whose
	// events are estimated at more than the budget is refused as too
	// large (Budget.Fits).
	//
	// It is sized with the server's body budget (32 MiB by default) for
	// a server of 512 MiB with GOMEMLIMIT=352MiB: what the two budgets
	// hold, 128 MiB, and the server's own heap stay well under half the
	// soft limit, so that the collector's garbage (up to as much again,
	// with GOGC=100) keeps the heap under it rather than the limit
	// holding it there, which took such a server to 518 MiB of resident
	// memory with budgets of 64 MiB and 192 MiB.
	DefaultMaxEventBytes = 96 << 20
	// DefaultTenantShare is the part of each server-wide budget one
	// tenant may hold.
	DefaultTenantShare = 0.5
)
