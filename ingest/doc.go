// Package ingest is the write pipeline: the one way events come in,
// whatever their protocol. The HTTP API's JSON and NDJSON writes, its
// InfluxDB line protocol writes (package server) and the MQTT
// subscriptions (package mqttsub) all go through it; each protocol
// reads its own bytes and words its own answers, and the pipeline does
// the rest, in this order:
//
//  1. authenticate: the API key a request carries gives its tenant
//     (Pipeline.Authenticate), once, when the request starts; an MQTT
//     subscription's tenant is configured (Pipeline.WriteAs). The
//     tenant counts as active for the CPU pool (admission.CPU.Seen).
//  2. a turn among the tenant's writes at work
//     (tenant.Limits.MaxConcurrentWrites, Write.Turn), before the body
//     is read, so that the requests that wait hold no memory.
//  3. the body, read by the protocol, whose bytes it holds in the body
//     budget as they arrive (Write.HoldBody), if it has one: the HTTP
//     server reads a body a step at a time; an MQTT client hands over a
//     whole message.
//  4. admit (Write.Admit): the key confirmed still live, once the body
//     has arrived, from the key cache (a key revoked during an upload
//     writes nothing); the body's bytes against the tenant's byte rate,
//     taking nothing yet; the estimate of its events taken out of the
//     events budget (admission.BodyBytes); a slot of the CPU pool for
//     the decoding; the events counted against Options.MaxEvents; the
//     hold trimmed to the estimate of what was decoded
//     (admission.BatchBytes); the events and bytes taken from the
//     tenant's write rates.
//  5. the protocol's own checks of what it decoded, if any, with the
//     engine's dry run of the write (Write.Check).
//  6. write (Write.Store): a slot of the CPU pool, and one
//     engine.DB.WriteTables of every table, so that the table budget
//     counts the new tables of the whole write and a refusal writes none
//     of it.
//  7. the answer, by the protocol; Write.Done gives back the body's and
//     the events' memory and the turn.
//
// A stage that finds no room behaves as the Mode of the write says:
// Refuse waits up to Options.Wait for room in a budget or for a turn,
// and refuses at once what the tenant's rates do not allow, so that an
// HTTP client is answered 429 or 503 with Retry-After and retries; Wait
// waits until the context ends, budgets, turns and rates alike, for a
// reader that slows down instead (an MQTT subscription stops reading its
// broker); Try takes only what is free now, for an MQTT message that
// joins a batch whose first message already holds its room. What can
// never fit (a write over the whole events budget, or over MaxEvents)
// is refused in every mode; one over a rate's burst is refused (Refuse,
// Try) or waits for the whole burst and goes (Wait).
//
// The pipeline returns the errors of the packages it calls, as they are
// (admission's budget errors and *admission.LimitError, the decoder's,
// the engine's, tenant's), and *TooManyEventsError: each protocol turns
// them into its answer.
//
// The pipeline holds the server's concerns that the engine does not
// need: the registry of tenants and its key cache, the CPU pool, the
// body and events budgets and the tenants' limits. The HTTP server and
// the MQTT subscriber each make a Pipeline (New) over the same ones,
// which the caller (`timetable serve`) makes once and gives to both.
package ingest
