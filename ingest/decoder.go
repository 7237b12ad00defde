package ingest

import (
	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine"
)

// Decoder turns a write's body into the events of each table it writes
// to: each protocol has its own (the HTTP API's JSON and NDJSON bodies,
// its line protocol bodies, an MQTT subscription's payloads), made with
// what the protocol knows of the write (its table, its limits, the time
// it arrived), and kept by it for its answer. The pipeline calls Decode
// once, within its admission stage (Write.Admit), with a slot of the CPU
// pool.
type Decoder interface {
	// Decode returns the events body holds, by table, or why it does
	// not decode.
	Decode(body []byte) ([]engine.TableEvents, error)
	// Format says how a body holds its events (an event a line or not,
	// line protocol or JSON), for the estimate of what they take before
	// it is decoded (admission.BodyBytes).
	Format() admission.Format
}

// TableChecker is a Decoder whose protocol names the refusals of every
// table of a write at once (line protocol) rather than the first one
// Store meets: Write.Run checks the tables of a write of several
// (Write.Check) before it stores any, and stores them only when Refused
// returns nil.
type TableChecker interface {
	Decoder
	// Refused returns the write's refusal from the engine's refusal of
	// each table (nil for a table it takes), or nil when it takes them
	// all.
	Refused(errs []error) error
}
