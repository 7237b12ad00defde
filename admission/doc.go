// Package admission decides whether a request may go on, and how much of
// the server it may hold meanwhile: the server-wide budgets of memory
// that requests hold (Budget), with a cap per tenant so that no tenant
// holds more than its share while others wait, the conservative estimate
// of the memory decoded events take (BatchBytes: the columns of an
// event.Batch, and one span of the items the engine builds from them,
// WriteSpanEnd), and each tenant's
// write rates, concurrent writes and concurrent queries (Tenants), and the
// server-wide pool of slots for heavy CPU work (CPU), which leaves a core
// to other tenants' light requests while more than one tenant is active. The engine's query budget of partitions is a Budget too, each tenant's cap
// given with its reads (Budget.AcquireWithin).
//
// The write pipeline (package ingest) applies them to every write, in
// the order its documentation gives, whichever protocol it came by. The
// HTTP server (package server) and the MQTT subscriber (package
// mqttsub) share one Budget of decoded events, so that the memory of the
// events a server holds is bounded whichever path they came by: the HTTP
// server answers 503 (a full budget) or 429 (a tenant over its share or
// its rate) with Retry-After, and the MQTT subscriber stops reading its
// broker until there is room, QoS 1 redelivery doing the rest. A request
// larger than a whole budget can never be held (ErrTooLarge): the server
// answers 413 naming the budget's setting, the subscriber dead-letters
// the message. A request over its tenant's share but within the budget
// gets in once its tenant holds nothing else.
//
// # Caveats
//
// The budgets count what requests hold, not what the process holds: the
// Go runtime keeps up to GOGC percent more heap than is live, the
// engine's caches and the store's memtables are beside them, and an MQTT
// client reads a whole packet before timetable sees it (bound that with
// the broker's maximum packet size). The defaults are sized so that the
// body budget and the events budget together, with the server's own
// heap, stay under half of the soft memory limit of a server of 512 MiB
// (GOMEMLIMIT=352MiB): under it, garbage keeps the heap below the limit;
// past it, the limit holds the heap at 352 MiB and the process, with
// Pebble's memtables beside it, over 512 MiB.
package admission
