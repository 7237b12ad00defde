// Package mqttsub subscribes timetable to MQTT brokers: the subscriptions
// of the configuration's mqtt section (config.Subscription), which
// `timetable serve` keeps for as long as it runs, each writing the events
// of its messages to a tenant's logical table.
//
// # Acknowledged means durable
//
// Every subscription is QoS 1 on a persistent session: the client id is
// stable (configured, or derived from the subscription) and the session
// is not clean, so the broker keeps what is published while timetable is
// down and sends it once it is back. Acknowledgement is manual: a message
// is acknowledged to the broker (PUBACK) only once all its events are
// durable, or once it was found invalid and dealt with. A message whose
// write failed is never acknowledged; the broker sends it again when the
// client reconnects, and the subscription retries the write meanwhile,
// with backoff, holding later messages back: a store that is down stops
// the subscription rather than losing messages.
//
// A message delivered twice (the broker redelivers what was not
// acknowledged when a connection ends) writes nothing twice, because
// event ids are hashes of the events' contents (package event). An event
// without time takes the time timetable received it (event.Limits.
// ReceiveTime), so a redelivery of it is a new event: devices that need
// exactly-once send time (an id alone does not do, since an id names one
// event per series and time).
//
// # Messages
//
// A payload is timetable's JSON events (format json: one event object,
// an array of them, or NDJSON; a payload that parses as one JSON value is
// that value) or InfluxDB line protocol (format line, package lineproto).
// The series is the topic level the subscription names, the value of a
// payload field (series_field, json), or for line protocol the tag set;
// an event that names another series than its topic level is invalid, as
// is one without the series field.
//
// A message is written whole or not at all. One that does not decode, or
// holds an event the engine would refuse, is invalid: it is counted
// (timetable_mqtt_messages_total{result="invalid"}), logged with its
// topic and the reason, published to the dead-letter topic when one is
// configured, and acknowledged. It never blocks the messages after it.
//
// # Table budget
//
// A message is a request to the engine's table budget (engine.
// TableBudget): the new physical tables of all its events count
// together, over every logical table it names. A message the budget
// refuses is set aside as an invalid one is, with the budget's reason
// (timetable_mqtt_messages_total{result="refused"}): one that needs more
// new tables than a request may make, which no retry cures; one that
// needs a table while the account's tables are near its quota, which
// only the operator cures; and one for which the tenant's new tables of
// the hour are spent. Decision: the last is dead-lettered too, its
// reason saying when the next hour has room, rather than retried, since
// acknowledgements go out in order and waiting for the hour would hold
// every later message of the subscription back for up to an hour;
// publishing the dead letter's payload again once there is room writes
// it (a message written twice stores nothing twice). Messages of a
// batch that each fit the budget are written even when the batch
// together would not: a batch the budget refuses is written again
// message by message.
// MQTT 3.1.1 has no message properties, so the dead letter is a JSON
// envelope: {"topic", "reason", "received", "payload"} (the payload as a
// string when it is UTF-8, else "payload_base64").
//
// # Limits
//
// A message obeys the HTTP API's per-request limits (Options.
// MaxPayloadBytes and MaxEvents, the configuration's limits.max_body_bytes
// and limits.max_events): one over them is invalid, and dead-lettered
// with the reason; an oversize one without its payload (payload_bytes
// gives its size), and undecoded. A message goes through the write
// pipeline the HTTP server's writes go through (package ingest), in its
// mode that waits where the server refuses: before a subscription
// decodes a message it takes the estimate of its events' memory out of
// the events budget it shares with the HTTP server (Options.EventBudget,
// package admission), and gives it back once the message is written;
// while the budget is full, or the subscription's tenant holds its
// share, the subscription reads nothing more from its broker, which
// keeps what it has not delivered (QoS 1). A tenant over its write rates
// (Options.Tenants) slows its subscriptions down the same way. The
// decoding of a message and the write of a batch take slots of the CPU
// pool shared with the server (Options.CPU), as the server's writes do. A message whose
// events are estimated at more than the whole budget
// (limits.max_event_bytes_in_flight) is invalid, dead-lettered with the
// reason, since no wait would let it in; so is one whose numbers, in
// the plain decimal notation they are stored in (1e125 is 126 digits),
// take its events past twice its size and 8 KiB more
// (event.DecodedTextBound): the decoder stops there, as it does for the
// server's 413. The client reads a
// whole packet before timetable sees it: bound packets at the broker too
// (mosquitto's max_packet_size).
//
// # Batches
//
// The messages that arrived while the last write ran are written
// together, up to Options.MaxBatch: one engine write per logical table
// (event.Join), checked first (engine.DB.CheckWrite) so that an invalid
// message is found and set aside before anything of the others is
// written. Acknowledgements go out in the order the messages came, as
// MQTT requires. The broker bounds the messages in flight to one client
// (mosquitto's max_inflight_messages, 20 by default), and so the size of
// a batch.
//
// # Client
//
// The MQTT client is Eclipse Paho's (github.com/eclipse/paho.mqtt.golang,
// MQTT 3.1.1), with automatic reconnection; the subscription is made
// again on every connection.
package mqttsub
