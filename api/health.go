package api

// Health is the answer of GET /healthz ({"status":"ok"}) and GET
// /readyz ({"status":"ready"}, or 503 with {"reason":…,
// "status":"unavailable"}).
type Health struct {
	// Reason says why the server is not ready.
	Reason string `json:"reason,omitempty"`
	Status string `json:"status"`
}

// Statuses of Health.
const (
	StatusOK          = "ok"
	StatusReady       = "ready"
	StatusUnavailable = "unavailable"
)

// InfluxPing is the answer of GET /ping?verbose=true, as InfluxDB's.
type InfluxPing struct {
	Version string `json:"version"`
}
