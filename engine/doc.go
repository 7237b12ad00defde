// Package engine is timetable's embeddable time-series engine: the write
// path that routes events to period tables and the read path that fans a
// query out over tables, series and shards and merges the answers in time
// order. It runs on any storage.Store.
//
// # Basics
//
// Open an engine on a store, then Write and Query:
//
//	db, err := engine.Open(ctx, store, engine.Options{})
//	err = db.Write(ctx, "acme", "a_table", events)
//	page, err := db.Query(ctx, "acme", engine.Query{Table: "a_table", From: from, To: to})
//
// # Row layout
//
// Each event is one item, keyed by its series, shard, time and id; the
// format of every item of a data table (keys, row and map items, series
// index entries, rollups and their markers) is package itemenc's, and
// its package doc is the one description of it.
//
// The shard is a hash of the event id modulo the table's shard count, so a
// retried event lands on the very item it wrote before; the count is
// recorded in each table's registry entry, so changing a family's shard
// count only affects new tables.
//
// The id of an event without a client id is a hash of its content under
// the id scheme of the physical table it goes to (event.IDScheme),
// recorded in the table's registry entry like its shard count: 11
// characters in the tables this engine makes (Options.IDScheme, by
// default event.LatestIDScheme; a table made for a time another table
// of the family holds takes that one's), 22 in tables made before schemes were
// recorded, which keep scheme 1 for good so that a retried write of
// their events computes the ids they were stored under. So a write
// routes each event to its table first and gives it its id after; the
// request is checked whole before, each item sized with the longest id a
// scheme gives (event.MaxAssignedIDLen). Tests open an engine with
// Options.IDScheme set to event.IDScheme1 to stand for a deployment of a
// version before schemes, then the same store with the default.
//
// # Tables
//
// Which physical tables exist, and what each holds, comes from the table
// registry in the meta table (package registry), never from the current
// schema (Options.Schema) or from table names and tags. The engine keeps
// each family's registry entries; a read asks the registry for the
// family's version (one GetItem) and reads its entries again only when
// the version moved, which every write of an entry does before it
// returns, so a table made a moment ago by another server is read at once
// (catalog_listing.go); the reads under one WithCatalogSnapshot context
// (a server's read request) share one read of the version. A write
// routes each event to the live registered table whose period holds its
// time and whose write month (if it has one) holds the write, whatever
// the family's period, naming or shards are today; only when none does is
// a table named by today's policy registered and made. Writes keep the
// tables they have routed to in a cache and ask the registry only when it
// has none for an event. A table whose name is already registered for
// another period (a day and the week starting that day are named alike
// under date naming) is made at the registered table's granularity, so
// the old granularity finishes out the period it partly covers.
//
// A table is registered (state creating) before it is made and marked
// active after; a table left creating by a writer that stopped is made by
// the next writer that routes to it. A table found deleted while the
// registry still had it live is marked missing and made again as the
// entry's next generation, with the same name, period and policy.
//
// Open registers the tables of the schema's families that the store has
// without an entry (tables of a version before the registry, or made by
// hand), from their tags where they have them and their names otherwise.
// An engine opened with Options.ReadOnly creates nothing: it needs the
// meta table to exist, keeps such adoptions in memory, and refuses writes.
//
// # Map layout
//
// A logical table of the map layout (family.Table.Layout, "layout: map"
// in the configuration file) keeps Fineo's layout: one item per
// partition and millisecond, holding the events of that millisecond
// (tt_ids, tt_ns, tt_sz and a map per field: package itemenc's doc has
// the format). Tables of both layouts share a family's physical tables.
//
// No cap. An item holds at most events_per_item events (250 by default,
// Fineo's limit) and stays under DynamoDB's 400 KB; further events of the
// millisecond go to continuation items with sequence numbers 1, 2, … . An
// event of more than MaxMapFields fields, or too large for an item of its
// own, is refused at validation: the row layout takes it.
//
// Idempotent appends. Every write is a conditional storage.Update. A
// create requires that the item does not exist. An append requires that
// the item exists, that tt_ids holds none of the events' ids, that it has
// room for them (size(tt_ids) and tt_sz against the limits), and that
// each field map it extends exists (or, for a map it adds whole, does
// not); it lists the ids, sets the field entries and adds to tt_sz in
// one step. When a condition fails the writer reads the item, drops the
// events it already holds, and tries again with what it learnt. It moves
// on to the next continuation item only when the item it read lacks its
// events and can never take them: full by count, or closed. A writer
// whose events no longer fit by size first closes the item (sets tt_sz
// past the limit), on condition that it holds no more ids than when the
// writer read it, and so none of its events. Items
// only grow, and a full or closed item stays so, so an event id is stored
// in at most one item of its millisecond, however many writers race and
// however often a request is retried. Reads drop repeats all the same.
//
// Write paths. Which conditional write is tried first (create_first,
// append_first, auto) follows the write-path rule of docs/layouts.md, its
// one home; pathMemory.appendFirst applies it, and a writer reads the item
// after both writes failed. Events of one write for the same millisecond are appended together, as
// many per request as DynamoDB's expression limits allow (4 KB and 300
// operators; every id costs three: NOT, contains, AND): the writer sizes
// each append by storage.Update.Cost of the update it builds, the one
// place those limits are counted, and which both backends enforce.
//
// Reads. A partition is read a millisecond at a time: its items (and any
// row items of that millisecond) are decoded, sorted by time and id, and
// cut to the query's range and cursor, so queries, limits and cursors
// behave as in the row layout. A projection of fields projects the field
// maps. Should a table's layout change from map to row, a partition can
// hold both; reads switch to this mode at the first map item they meet,
// and in a descending read, row events of that one millisecond read
// before it may come out ahead of map events of the same millisecond.
//
// # Series index
//
// A query may leave out the series and read every series of a logical
// table. To find them without a scan, the engine writes, in the same batch
// as the first event of a series in a physical table, an index item with
// partition key "{tenant}#{table}" and the series as sort key. It lives and
// dies with its table.
//
// # Logical tables
//
// The first write to a logical table records it in the meta table (by
// default "timetable_meta"), with the tenants; a query of a logical table
// never written fails with ErrUnknownTable.
//
// # Reads
//
// A query finds the physical tables whose periods overlap [From, To] (with
// write-time grouping, several per period), starts one storage query per
// table, series and shard, fetches their first pages in parallel under
// Options.QueryParallelism, and merges them by (time, id, series). The same
// event found in two tables (a retry across a month boundary) is returned
// once. Later pages are read only as the merge needs them, so memory is
// bounded by pages, not by the number of events in the range. A page of
// one series opens a table's queries only once the table's period could
// hold the merge's next event, newest table first for a descending page:
// the latest events of a series, in its newest table, never query the
// older ones. When the tables opened run out of events, it opens the next
// table, and twice as many tables each time after (up to
// QueryParallelism), so that a sparse series over many tables costs few
// round trips.
//
// A query without a series reads every series, and nothing orders events
// across a table's partitions, so it reads every partition; its memory
// grows by a small constant per series at most. A page of every series
// reads each series' first event (a page of one item), keeps in a heap
// only the limit+1 series whose first events come first, and merges
// those, their pages doubling as the merge needs; a latest-10 of 100,000
// series holds 11 of them. A read of every event of every series (the
// raw edges of an aggregate from rollups, groups by a field's value),
// which needs all of them at once, reads pages that start at one item and
// grow up to a share of 65,536 items.
//
// QueryJSON answers a query as Query does, with the page written as the
// JSON the server sends, byte for byte what event.Event.AppendJSON writes
// of Query's events. It builds no event for a row-layout item: each item
// is written to its event's JSON as it is read, its sort key parsed and
// its attributes walked where the store holds them (storage.Iterator's
// Attrs) by an event.FieldsJSON, which sorts the names as AppendJSON
// does; the JSON waits in the partition's page, in chunks that are
// never copied, until the merge takes the event. Map-layout items, which
// hold many events of a millisecond to be sorted and filtered one by one,
// are decoded into events and written by AppendJSON.
//
// An aggregate builds no events (aggregate_walk.go): each series' partitions are
// merged by sort key, an event stored twice dropped, and each item is
// handed to the summary as the store holds it (storage.Iterator's SortKey
// and Attrs, valid until the iterator moves), which copies only what it
// keeps. An aggregate of every series gives the series to
// QueryParallelism workers (no more than GOMAXPROCS under a CPU pool,
// WithCPU, whose store's reads wait on no network), each summarising
// its series' events into its own summaries by bucket, merged once at
// the end; a worker moves its iterators from series to series where the
// store can (storage.Requerier, aggregate_iterators.go). A series whose partitions
// hold map-layout items is read as events from the first such item on.
// Over chunk tables an aggregate folds the chunks' columns
// (aggregate_columns.go): a series' partitions are merged by sort key a
// chunk window at a time, and of each chunk the times and the columns of
// the fields summed are decoded (package chunk's ReadColumnsAt), with no
// event or map of fields, integers and decimals added to the sums as
// numbers without their text, floats as the decimals of their shortest
// text, made once per value a fold meets (agg.FloatCache). A window is
// folded only when chunks alone make it and their times do not overlap,
// so that no event is in two of them; a window that also holds rows or map items, or whose chunks
// overlap (an event stored twice, two requests' events interleaved), is
// decoded into events as a read decodes it, each event once. A filter,
// first, last, delta or rate (which order the events of one instant by
// their ids, which only events have) and archived tables read events
// through the merge.
//
// The cursor names exactly the last event returned and is signed with a key
// kept in the meta table, so a tampered or foreign cursor is refused
// (ErrBadCursor) rather than silently misread. Resuming never skips or
// repeats an event.
//
// # Aggregates
//
// Aggregate cuts the range [From, To] into buckets and summarises each
// bucket's events. Buckets are of one length that divides a day (a second
// to a day, AggregateQuery.Bucket), aligned to UTC midnight, or calendar
// periods (AggregateQuery.Calendar) cut as package period cuts the
// periods of tables: weeks from 00:00 UTC on a weekday (Sunday unless
// told otherwise, as weekly periods), calendar months, or calendar
// quarters. ParseBucket reads them as the HTTP API and the CLI take them:
// "1m", "1h", "1d"; "1w" or "week:monday"; "1mo"; "quarter". Each bucket
// states the exact span it covers (a month bucket is as long as its
// month), and the buckets at the edges of the range hold only the part
// inside it, marked Partial. A To that starts a bucket (and is not From)
// ends the range just before it, so that an aligned range never ends
// with a bucket a nanosecond wide. AggregateQuery.Offset shifts buckets
// of one length from midnight (InfluxQL's GROUP BY time(1h, 15m)); rollups
// serve them when the offset is whole hours.
//
// Sketches and groups. count_distinct (exact to DistinctExact values,
// then a HyperLogLog), the percentiles of any rank and the median
// (exact, nearest-rank or InfluxQL's rank as AggregateQuery.Rank says, to
// QuantileExact values, then a DDSketch of QuantileAccuracy), stddev
// (from the sum of squares) and a
// counter's delta and rate (per series, in time order, a decrease
// read as a reset) need more than a running total, so they are computed
// from events only, and an aggregate that asks for one reads the events
// even where rollups exist (DB.RollupUse says so). AggregateGroups
// summarises each group of a page apart: by series, one aggregate per
// series, rollups included; by a field's string value, one read of the
// events, keeping GroupLimit+1 groups at most (aggregate_group.go; the
// sketches are package internal/agg's).
//
// Exact sums. Event numbers are decimals of up to 38 significant digits
// (DynamoDB's numbers, kept as json.Number), and so are the results: sums
// are exact decimals, whatever the number of events and their scales (a
// sum may hold more digits than a DynamoDB number: 1 + 1e-38 is kept
// whole); min and max compare exactly; avg is the exact sum divided by the
// count, rounded half to even to AvgDigits (38) significant digits. Each
// is written in the canonical form of event numbers (plain notation, no
// trailing zeros), so raw aggregates and rollups give byte-identical
// answers, equal to the true decimal ones. (float64 sums depend on the
// order values are added in, so the raw and the rollup sums of the same
// events would differ, and neither would be the true sum:
// TestAggregateSumsAreExactDecimals.)
//
// The arithmetic is github.com/cockroachdb/apd/v3, CockroachDB's
// arbitrary-precision decimals, which implement the General Decimal
// Arithmetic specification and are tested against its suite. math/big
// alone would mean writing by hand what apd has: big.Rat adds exactly but
// writes a decimal only when told how many digits, and a scaled big.Int
// needs parsing, rescaling, rounding and formatting of its own. apd keeps
// coefficients of up to 128 bits inline, so adding a value allocates
// nothing.
//
// # Rollups
//
// A logical table with rollups (family.Table.Rollups, "rollups: true" in
// YAML, or Options.Rollups for every table) keeps exact hourly and daily
// summaries per series, which Aggregate uses for bucket lengths that are
// whole hours (hourly rollups) or whole days, and for weeks, months and
// quarters (daily rollups, summed: a month of a series reads 28 to 31
// items instead of its events). They are exact because they are never
// updated in place: a rollup records which writes it saw, and is thrown
// away and computed again from raw events when that is not all of them.
//
// Version markers. Every Write to such a table puts, in each physical
// table it writes and in the same batch as the series index entries
// (before any event), one marker per hour and per day and per series its
// events touch: partition key "{tenant}#{table}#~v", sort key
// "{unit}#{bucket start}#{series}" (unit "hour" or "day", the start in
// the fixed-width time of the row layout), with attributes "n", a random
// nonce drawn once per Write call, and "at", the write's clock time in
// Unix nanoseconds. The partition key ends in "#~", so it meets neither
// data partitions (which end in "#<digits>") nor the series index (one
// "#").
//
// Rollup items. The rollup of a series for one bucket lives in the
// bucket's home table, the physical table an event at the bucket's start
// written at that instant goes to (made if missing): partition key
// "{tenant}#{table}#{series}#~r{unit}", sort key the bucket start. It
// holds "v", its format (2: a rollup of another format is stale, and
// computed again), "events", "covered" (physical table name to nonce: the
// markers read before the raw events it summarises) and "fields": per
// field its count, sum, min and max (or "nonnum": true when a value was
// not a number), and first and last with their sort keys first_t and
// last_t. The sum is the exact decimal as a string, since it may need
// more digits than a DynamoDB number holds.
//
// Validity. Aggregate reads the markers of the buckets in range from every
// physical table overlapping them, then the stored rollups. A rollup is
// used only if its covered map equals the current markers exactly and
// every marker is older than Options.RollupSettle (15 minutes by default).
// Otherwise the bucket is computed from raw events over the merged read
// path (each event once, repeats in two write-month tables dropped), and
// the result stored if its markers are settled. A retried write draws a
// new nonce, so the rollups it touches go stale and are recomputed, never
// counted twice; a late event, hours or months late, writes markers for
// its own hour and day and series only, so only those are recomputed.
// Partial hours or days at the ends of the query range are always read
// raw, and the summaries are combined per query bucket (counts and sums
// added, min and max, first and last by event order), so the answer is
// the one computed from raw events, to the digit.
//
// The settle window is what makes reading markers before events safe: a
// Write to a table with rollups runs under a context deadline of half of
// RollupSettle, so by the time its markers have settled its events are
// stored or the write has failed (and any retry writes new markers).
//
// # Floor plan
//
// Two packages hold what needs no table: itemenc, the format of a data
// table's items (keys, row and map items, ItemEvents), which the archive
// and the CLI use too; and internal/agg, the aggregate arithmetic
// (summaries, exact decimals, sketches, rollup values, Bucket). engine
// re-exports the names its callers know (Bucket, TableEvent, the Fn
// constants). The files of engine are named by subsystem
// (TestFloorPlan checks this list against them):
//
//	db.go, options.go, metrics.go  Open, Close, Options, metrics
//	item.go                        itemenc's names, re-exported
//	catalog.go                     physical tables: the registry's view,
//	                               routing, adoption, recreation
//	catalog_listing.go             the registry entries kept for reads,
//	                               and the version that keeps them current
//	catalog_version.go             reads of a family's version, shared
//	                               by the queries that may share them
//	meta_table.go                  logical tables, and the cursor secret
//	series_index.go                the series index: its writes, cache,
//	                               ListSeries
//	tables.go                      Tables, TableStatus
//	tenant_purge.go                DeleteTenantData
//	write.go                       Write, WriteBatch, WriteTables,
//	                               CheckWrite, and the split of a batch
//	                               by physical table
//	write_span.go                  the spans a write's events are cut
//	                               into, by series for chunks
//	write_budget.go                the table budget of a write
//	write_budget_hour.go           a tenant's new tables of the hour, in
//	                               the meta table
//	write_keys.go                  the text of a write's keys, copied
//	                               into shared chunks
//	write_map.go                   the map layout's conditional appends
//	write_chunk.go                 the chunk layout: a write's events of
//	                               a series and window packed in chunks
//	write_marker.go                rollup version markers a write leaves
//	write_fence.go                 fenced tables refused, WriteTimeout
//	read.go                        Query, QueryJSON, and a read's fan-out
//	read_query.go                  Query, Page
//	read_source.go                 a source: one partition's reads, its
//	                               selection (range, filter, fields), JSON
//	filter_pushdown.go             the filter a read sends to the store
//	read_chunk.go                  partitions of chunk tables read a
//	                               window at a time
//	read_window.go                 a window decoded lazily by its items'
//	                               spans
//	read_merge.go                  the merge of sources in time order
//	read_every_series.go           reads of every series: the candidates
//	                               whose first events come first
//	read_cursor.go                 cursors: positions, signed
//	read_budget.go                 the budget of partitions reads hold
//	read_hold.go                   memory other than partitions held of
//	                               that budget (QueryHold)
//	read_turns.go                  a tenant's turns at the series of its
//	                               aggregates, and slots of WithCPU's pool
//	read_archive.go                the archive reader: archived tables read
//	                               from their archives, and gaps
//	aggregate.go                   Aggregate, AggregateQuery, buckets
//	                               streamed or merged per series
//	aggregate_bucket.go            bucket lengths, calendar buckets, edges
//	aggregate_walk.go              the walk of a series' partitions by
//	                               sort key, without events
//	aggregate_columns.go           aggregates of chunk tables folded
//	                               from the chunks' columns
//	aggregate_iterators.go         a worker's iterators, moved from
//	                               series to series
//	aggregate_group.go             AggregateGroups
//	aggregate_rollup.go            rollups: which to use, read, recompute
//
// # Chunk layout
//
// A family of the chunk layout ("layout: chunk", family.LayoutChunk)
// makes tables whose registry entries record the layout and its window
// (chunk_window, an hour by default): the layout is a fact of each
// table, as its id scheme is, so a table made before keeps its rows, and
// a chunk table written after the family turns back to rows takes rows
// beside its chunks. A write packs its events of one series and window
// in a table of chunks into one item (package chunk's Pack: by column,
// compressed, keyed by its content, split under 400 KB), reading
// nothing first; a retried request writes the very items again, and an
// event two chunks of a window hold (a retry that joined other events)
// is read once. An event a chunk takes (fields of at most 16 KB, which
// no check as an item can refuse: write_chunk.go, chunkRowBound) is not
// made a row item first: its fields go from the request's batch into
// its chunk's columns as a list (chunk.PackFields), decoded once, with
// no map, no keys and no item check of a row that is not written.
// A read of a chunk table reads each partition a window
// at a time (read_chunk.go), chunks and rows together, decodes the
// window lazily by its items' spans (read_window.go: an item that cannot
// hold an event of the read is never decoded, and an event is returned
// once no item left could precede it), and cuts the window's events to
// its range, cursor, filter and fields itself, as for a millisecond of
// the map layout; while it reads the rest of a
// window it cuts its pages to the window, so a series' latest events
// whose newest window is one chunk with enough of them read one item
// per shard. Aggregates fold chunk tables' columns (see Reads). The
// format is
// package chunk's; docs/layouts.md says what was chosen and why.
// Events written one at a time (a small chunk each) are packed once
// their table leaves the hot tier, by package compact.
//
// # Archived tables
//
// A table the lifecycle archived and deleted keeps its registry entry
// (state deleted, with its archive target). With Options.Archives, a read
// whose range reaches it reads its partitions from the archive
// (ArchiveReader, package archive's Reader) as it read the table: the
// sources of its partitions sit in the merge beside the live tables', under the
// same cursors, filters, aggregates and limits, and rollups are not used
// over such a range. Its series come from the archive too: ListSeries
// (and so InfluxQL's SHOW TAG VALUES, SHOW SERIES and tag filters) lists
// them beside the live tables' series indexes, and Tables lists the
// table, state deleted, with its archive's target. A period whose table
// is gone with no archive to read is named in Page.Gaps.
//
// Before the lifecycle archives or deletes a table it fences it
// (registry Entry.FencedAt): a write routed to a fenced table fails with
// ErrFenced (storage.ErrUnavailable: 503 with Retry-After). A write trusts
// the registry entry it routed by for Options.RouteTTL, then reads it
// again, and ends by Options.WriteTimeout, so a fence is seen by every
// writer within the lifecycle's FenceSettle.
//
// # Caveats
//
// A table deleted behind the engine's back reads as empty (the page names
// it in Gaps once the registry marks it missing), and a write makes it
// again.
//
// The engine remembers which series each table's series index holds, so
// that it writes an index entry once per series and table; writes that
// find the same series missing at once share one write of its entry, and
// store their events only after it succeeded. It knows a table by its
// name and generation (the registry's), so a table the lifecycle archived
// and deleted and a write made again under its name has its series
// indexed anew, and it forgets a table when it finds it deleted (a failed
// read or write, or a listing without it). Only a table deleted and made
// again outside timetable between two of this engine's writes to it, the
// registry none the wiser, would miss the index entries of series the
// engine had indexed in the old one: queries without a series would miss
// those events (queries naming the series still find them).
//
// Rollups track only writes made with rollups on: a rollup computed
// while another process still writes the table with rollups off can miss
// those events for good, so turn rollups on everywhere before the first
// aggregate that uses them. A rollup whose home table retention deleted is
// made again, with its table, by the next query of that bucket. A bucket
// in which a series has no events still gets a small empty rollup.
package engine
