// Package event is timetable's event model: how events arrive as JSON, the
// rules they must follow before anything is written, the canonical form
// their values are stored and hashed in, and their idempotent ids.
//
// # Basics
//
// An Event is a time, an optional series, an id and named fields. A request
// body is decoded with DecodeJSON (a JSON array of events) or DecodeNDJSON
// (one event per line). Each event reads
//
//	{"time": "2017-04-10T12:00:00.123456Z", "series": "car-17", "id": "optional", "fields": {"speed": 88.5}}
//
// Both decoders check every event of the body before returning, so that a
// request is accepted or refused whole: any bad event makes them return a
// *BatchError naming each bad event by its 0-based index and a reason. A
// body that is not JSON (or, for DecodeJSON, not an array) is one error
// wrapping ErrMalformedBody instead. Events built in Go go through Check
// (or Validate, one at a time), which applies the same rules. What the
// decoders and Check return is a Batch: events known to be valid, which
// the engine writes without checking them again, and which cannot be
// edited through the Batch, so that an edited event is checked again. The
// engine then calls AssignID event by event, which gives an event
// without a client id its idempotent id under the scheme of the table it
// goes to (Batch.AssignID, from the batch's columns).
//
// # Rules
//
// time is required (unless Limits.ReceiveTime, which gives an event
// without one the now the caller passes in: the MQTT subscriber's receive
// time): an RFC 3339 string with an optional fraction of up to
// nine digits (nanoseconds) and any offset ("Z", "z" or ±hh:mm), converted
// to UTC; or an integer JSON number of Unix milliseconds. A float, a number
// with an exponent, or a string of digits is refused. An integer before
// 2001-01-01 as milliseconds (below 978307200000) is refused as well: it is
// almost surely Unix seconds, and read as milliseconds would land in 1970.
// A request that says its unit (Limits.Precision: seconds, milliseconds,
// microseconds or nanoseconds, as InfluxDB's precision parameter) has its
// integers read in that unit, whatever their value. Times before
// 1970-01-01T00:00:00Z are refused (table names and keys count from the
// Unix epoch), and so are times more than Limits.MaxFutureSkew past the now
// the caller passes in: this package never reads the clock.
//
// series is optional ("" or null mean none) and id is optional (null means
// none, "" is refused). Both are valid UTF-8 without control characters,
// of at most Limits.MaxSeries and Limits.MaxID bytes.
//
// fields is optional: an event may carry no field at all, as a bare
// occurrence ("the door opened at t"), so an absent, null or empty fields
// object is accepted and decodes as a nil map. Field values are strings,
// numbers, booleans, null, objects and arrays, nested at most
// Limits.MaxDepth levels, counted as DynamoDB counts them: a field is
// level 1 and the members of an object or array one level below it, so
// a field may hold 31 objects or arrays one inside another, and an object
// or array at level 32 is refused even when empty. A top-level field name
// has 1 to Limits.MaxFieldName bytes; "pk", "sk" and names starting with
// "tt_" are reserved for timetable's own attributes. A nested key has 1
// to storage.MaxNameBytes bytes, as DynamoDB requires of a map's keys.
// Any key, top-level or nested, appears once per object.
//
// Every string in the input must be valid UTF-8 and \u escapes must not
// leave a lone UTF-16 surrogate: such text is refused as not JSON (the
// problem of its line in NDJSON, a malformed body in a JSON array) rather
// than silently changed to U+FFFD as encoding/json does. Unknown top-level keys
// are refused by name, so a typo ("tim") is not silently dropped.
//
// # Limits
//
// Limits bounds what one event may hold. A zero field means its default:
//
//	MaxFields      1000 top-level fields
//	MaxDepth       32 levels of nesting (storage.MaxDepth, DynamoDB's own limit; more is refused by Limits.Validate)
//	MaxFieldName   255 bytes
//	MaxSeries      512 bytes
//	MaxID          128 bytes
//	MaxFutureSkew  24h
//
// Every limit that comes from DynamoDB is package storage's (storage.
// MaxDepth, storage.MaxNameBytes, storage.CanonicalNumber), so that an
// event accepted here is an item every store accepts. The size of the
// stored item is not checked here: it depends on the key layout, and the
// engine checks the item it builds with storage.Item.Checked. It sizes
// an event whose id is still to be assigned with the longest id a scheme
// assigns (MaxAssignedIDLen), so that it can refuse the event before it
// knows the table, and so the scheme, the event goes to.
//
// # Numbers
//
// Numbers are kept as json.Number so that no digit is lost to float64, and
// are refused where DynamoDB would refuse them: more than 38 significant
// digits, or a magnitude outside 1e-130 to 9.9999999999999999999999999999999999999e125
// (JSON cannot express infinities or NaN; Validate refuses them in Go
// floats).
//
// Every number is rewritten into one canonical form, so that 1, 1.0,
// 1.00, 10e-1 and 1e0 are the same stored value and hash to the same id.
// The canonical form is the one every store keeps (plain decimal
// notation, never an exponent, no sign for zero, no leading zeros, no
// trailing zeros after the point: 1.5e2 is 150, 1e-3 is 0.001), so that
// an event reads back exactly as it was accepted, from either backend.
// See storage.CanonicalNumber, which both the decoders and Validate use.
//
// That form is long for a number with a large exponent: 1e125, five
// bytes of text, is 126 digits, and 1e-130 is 132 characters. So that a
// body cannot make the server build far more than the estimate of its
// memory made before decoding (DecodedBytesBound, which package
// admission holds), the decoders stop as soon as the fields, series and
// ids they built pass DecodedTextBound of the body, twice its size and
// DecodedSlack (8 KiB) more, and refuse the whole body with a
// *DecodedTooLargeError (ErrDecodedTooLarge), naming the limit: no event
// of it is returned. Ordinary bodies stay far below it (fields take at
// most one and a half times their text but for such numbers), and a
// small body may hold some sixty numbers of the longest form. Storing
// such numbers with their exponent would have kept them short, but would
// change how they read back and the ids they hash to, which are fixed.
//
// # Ids
//
// AssignID hashes (tenant, logical table, series, time to the nanosecond,
// fields) over an unambiguous length-prefixed encoding (map keys sorted,
// numbers canonical, every value tagged with its type). The same event
// always gets the same id, so a retried request rewrites the same items
// instead of duplicating them; any difference in any part gives another
// id. A client that sends its own id keeps it, verbatim, under every
// scheme.
//
// How the hash is taken is the id scheme (IDScheme), a fact of the
// physical table recorded when the table is made (package registry), so
// that a retried write computes the id its event was stored under:
//
//   - IDScheme1: SHA-256, the first 128 bits in unpadded base64url, 22
//     characters. Tables made before schemes were recorded have it, and
//     keep it: their ids keep matching and keep their meaning.
//   - IDScheme2: XXH64 (github.com/cespare/xxhash, a fixed published
//     algorithm, so ids are the same in every version), all 64 bits in
//     unpadded base64url, 11 characters. Tables made from then on have
//     it (LatestIDScheme).
//
// Each scheme starts its encoding with a domain string of its own, and
// their ids differ in length, so no id of one scheme can be taken for
// one of the other.
//
// Why 64 bits serve: an id only has to tell apart the events of one
// series at one instant, since the item's key holds the tenant, the
// table, the series and the time to the nanosecond besides the id. Even
// a million distinct events of one series at one nanosecond collide with
// a probability of about 3e-8 (n²/2^65); real series hold one or a few.
// On Pebble nothing compresses a hash, so the 8 bytes saved per event are
// about a fifth of what the events take on disk after compaction.
// XXH64 is not a cryptographic hash, and a collision can be crafted; but
// a crafted collision can only overwrite an event of the same tenant at
// the same series and instant, which that tenant can do already by
// sending the event's id as a client id. Fewer than 64 bits were not
// taken: at 32 bits, events at one instant of a busy series (a burst of
// a few thousand with the same timestamp) would collide by chance.
//
// # Decoding
//
// The decoders parse JSON by hand rather than through encoding/json: a
// request is decoded on the ingest hot path (the server's goal is 200,000
// events a second on two cores), and a single pass that checks syntax,
// validates and canonicalizes as it reads, and reuses repeated field names
// and series across a body, takes less time and far fewer allocations
// than encoding/json needs merely to decode the same body into maps
// (BenchmarkDecodeNDJSON against BenchmarkBaselineEncodingJSON measures
// both; docs/benchmarks.md has the ingest figures). A decoder builds no
// map: it writes each event's fields into the Batch's one string of
// fields as it reads them, in the encoding an id hashes (maps in
// bytewise key order, a list's or map's length before its members), and
// the event's time, series (an index into the batch's dictionary of
// series) and id into columns, so that a minimal event takes a few tens
// of bytes decoded whatever its shape (Batch.Bytes), an event's Fields
// are built only when a writer asks for that event (Batch.Event), and
// its id is hashed from the encoding as it is. The
// fuzz tests hold it to encoding/json: a body encoding/json finds invalid
// is refused, and an accepted one reads the same in both.
//
// # Concurrency
//
// Every function may be called from any number of goroutines. An Event is
// a plain value: its owner may change it, and Validate and AssignID change
// it in place. A Batch may be read from any number of goroutines;
// AssignIDs changes it.
package event
