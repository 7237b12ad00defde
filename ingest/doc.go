// Package ingest is the write pipeline: the one way events come in,
// whatever their protocol. The HTTP API's JSON and NDJSON writes, its
// InfluxDB line protocol writes (package server) and the MQTT
// subscriptions (package mqttsub) all go through it. A protocol gives
// the pipeline a Decoder, which turns a body into the events of each
// table it writes to, and words its own answers; the pipeline does the
// rest. The decoders of the HTTP API's bodies are the pipeline's own
// (JSON, LineProtocol, over packages event and event/lineproto); an MQTT
// subscription's, which takes a series from its topic, is mqttsub's.
//
// Followed as data, an HTTP write goes server → ingest → engine →
// storage, each package once: the server checks the request's
// parameters and calls Write.Run once, with the body's reader and its
// decoder, and Run goes through the stages in this order, calling down
// into admission (budgets, rates, turns, the CPU pool), the decoder
// and the engine:
//
//  1. authenticate: the API key a request carries gives its tenant
//     (Pipeline.Authenticate), once, when the request starts; an MQTT
//     subscription's tenant is configured (Pipeline.WriteAs). The
//     tenant counts as active for the CPU pool (admission.CPU.Seen).
//  2. a turn among the tenant's writes at work
//     (tenant.Limits.MaxConcurrentWrites), before the body is read, so
//     that the requests that wait hold no memory.
//  3. the body, read whole from its reader, its bytes held in the body
//     budget (Options.BodyBudget) as they arrive, a step at a time,
//     within Options.MaxBodyBytes.
//  4. admit (Write.Admit): the key confirmed still live, once the body
//     has arrived, from the key cache (a key revoked during an upload
//     writes nothing); the body's bytes against the tenant's byte rate,
//     taking nothing yet; the estimate of its events taken out of the
//     events budget (admission.BodyBytes); a slot of the CPU pool for
//     the Decoder; the body's bytes given back to the body budget (the
//     events hold nothing of them); the events counted against
//     Options.MaxEvents; the hold trimmed to the estimate of what was
//     decoded (admission.BatchBytes); the events and bytes taken from
//     the tenant's write rates.
//  5. the engine's dry run of the write (Write.Check) of every table
//     when there are several, for a decoder that names every table's
//     refusal at once (TableChecker: line protocol).
//  6. write (Write.Store): a slot of the CPU pool, and one
//     engine.DB.WriteTables of every table, so that the table budget
//     counts the new tables of the whole write and a refusal writes none
//     of it.
//  7. the answer, by the protocol; Write.Done gives back the events'
//     memory and the turn.
//
// An MQTT subscription is handed whole messages and writes a batch of
// them at once: it calls the stages itself, Admit for each message
// (stage 4), Check and Store for the batch (5, 6), and skips the turn
// and the body budget (it reads one message at a time).
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
// the engine's, tenant's), and its own: *TooManyEventsError,
// *BodyTooLargeError, *ReadError (the body's reader failed),
// *UnreadError (a refusal before any of the body was read) and
// *StoreError (Store's failure, with the events written): each protocol
// turns them into its answer.
//
// The pipeline holds the server's concerns that the engine does not
// need: the registry of tenants and its key cache, the CPU pool, the
// body and events budgets and the tenants' limits. The HTTP server and
// the MQTT subscriber each make a Pipeline (New) over the same ones,
// which the caller (`timetable serve`) makes once and gives to both.
package ingest
