// Package dynamostore is the storage.Store that keeps timetable's tables in
// Amazon DynamoDB, or in any server speaking its API (DynamoDB Local,
// dynalite, ScyllaDB Alternator). It passes the conformance suite in
// storage/storagetest against dynalite.
//
// # Basics
//
// Open builds a DynamoDB client from the standard AWS configuration chain
// (AWS_REGION, AWS_PROFILE, credentials, and AWS_ENDPOINT_URL_DYNAMODB for a
// local endpoint), unless Options.Client supplies one. Nothing in this
// package names an endpoint or a credential.
//
// Every table has the key schema pk (S, HASH), sk (S, RANGE), named by
// storage.PKAttr and storage.SKAttr. Item attributes are stored as native
// DynamoDB types (string as S, json.Number as N, and so on, see
// package storage), so the AWS console, the AWS CLI and filter expressions
// read them as they are.
//
// # Decisions
//
// Retries. Throttling, 5xx answers and dropped connections are retried by
// the SDK's standard retryer (retry.NewStandard) with a full jitter
// exponential backoff from Options.RetryBaseDelay up to
// Options.MaxBackoff. Throttling (ProvisionedThroughputExceededException,
// ThrottlingException, RequestLimitExceeded) in a call whose context has a
// deadline is retried until the deadline, however many attempts that
// takes: DynamoDB asks for a lower rate, the backoff gives it one, and the
// caller's deadline (the engine's WriteTimeout for a write) says how long
// the answer may wait. Every other retryable error, and throttling in a
// call whose context has no deadline, is retried up to
// Options.MaxAttempts attempts (default 10, as AWS advises for DynamoDB).
// The retryer itself counts no attempts (retry.AddWithMaxAttempts with 0);
// a middleware of each call does, and marks the error of its last attempt
// as one not to retry. The SDK's retry quota, a token bucket shared by
// all calls that runs dry under sustained throttling and then stops
// retrying altogether, is off (ratelimit.None): every call gets its
// attempts, and its context bounds them. The only loop written here
// re-sends the UnprocessedItems of BatchWriteItem, which the SDK does
// not: with the same backoff, until the context's deadline, or at most
// Options.MaxUnprocessedAttempts times when it has none. A call still
// throttled when its context ends, and items still unprocessed then, fail
// with storage.ErrThrottled, the context's error in the chain too.
// Control-plane refusals (LimitExceededException, ResourceInUseException)
// are not retried at all: they become storage.ErrRefused at once, for the
// lifecycle manager to try again on a later cycle.
//
// Deadlines. Every call of the control plane (tables, TTL, tags, backups,
// exports, imports, Application Auto Scaling), its retries included, ends
// within Options.ControlTimeout (1 minute) whatever its caller's context
// allows, and a wait for a table's state within Options.WaitTimeout (10
// minutes; each DescribeTable of the wait bounded as a call): a call that
// the endpoint never answers fails with an error naming the operation
// and wrapping storage.ErrUnavailable, rather than holding a lifecycle
// cycle or a CLI command for good. An export's or import's wait ends at
// its context's deadline, or after 24 hours. Calls of items are bounded by
// their caller's context alone.
//
// Errors. AWS error codes (and, for UpdateItem, the messages of some
// ValidationExceptions) are examined in one file, errors.go, and turned
// into storage's sentinels: ResourceNotFoundException is
// storage.ErrTableNotFound, LimitExceededException and ResourceInUseException
// on a change are storage.ErrRefused, ProvisionedThroughputExceededException,
// ThrottlingException and RequestLimitExceeded once the retries ran out
// (or the context ended) are storage.ErrThrottled. An endpoint that cannot be reached (a connection
// refused, reset or timed out) or that answers 5xx, once the retries ran
// out, is storage.ErrUnavailable; nothing is cached about it, so the
// store serves again as soon as the endpoint does.
//
// Connections. The client Open builds keeps up to 100 idle connections to
// its endpoint (NewHTTPClient), where the SDK's transport keeps 10 per
// host, fewer than two concurrent BatchWrites hold in flight: each
// connection past those was closed when its request ended and opened,
// with its handshakes, by the next one.
//
// Writes. BatchWrite validates every item first (types, size by
// storage.ItemSize, distinct keys) and writes nothing if one is invalid. It
// then sends BatchWriteItem requests of 25 items, Options.WriteConcurrency
// of them in flight. After the first request that fails for good no new
// request starts; requests in flight finish. The *storage.BatchWriteError lists
// every item not known to be written: the items of failed requests, those
// left unprocessed, and those never sent. An item is reported written only
// after DynamoDB acknowledged it. An item reported unwritten may still have
// been written, when the connection dropped after DynamoDB applied the
// request; puts replace whole items with deterministic keys, so writing it
// again is harmless.
//
// Reads. Query builds its key condition with the expression package and
// follows DynamoDB's pages lazily with the SDK paginator, sized by the
// query's limit. Query.After becomes ExclusiveStartKey when it lies inside
// the queried range (DynamoDB refuses a start key outside it); outside, the
// range alone decides. Reads are strongly consistent, as on the embedded
// store, unless Options.EventuallyConsistent halves their cost, or a
// query says it may be eventually consistent (storage.Query.Eventual,
// storage.Segment.Eventual): the engine says so for a table that takes no
// more writes (registry.Entry.Settled).
//
// Updates. Update is one UpdateItem request whose condition and update
// expressions the expression package builds: CondExists and CondNotExists
// are attribute_exists and attribute_not_exists, CondNotContains is
// NOT contains(attr, :s), CondSizeAtMost size(attr) <= :n, CondAtMost
// attr <= :n, CondEqual attr = :v, CondAnyOf its alternatives ORed, all
// ANDed; ActionSet is SET attr = :v, ActionSetKey
// SET attr.key = :v, ActionAppend SET attr = list_append(if_not_exists(attr,
// :empty), :vs), ActionAdd ADD attr :n. The builder parses the names it is
// given ("[" starts a list index, and AppendName moves a leading "[n]" of a
// key onto the attribute before it), while attribute names and map keys
// may be any string; so it is given an alias per name and the real names
// replace the aliases in ExpressionAttributeNames. Every name is thus a
// placeholder and none is ever parsed. A ConditionalCheckFailedException
// is storage.ErrConditionFailed, and so is the ValidationException "The
// document path provided in the update expression is invalid for update":
// DynamoDB answers it when a SetKey finds no map to set a key in, a state
// of the item that a condition should have guarded, and the item is
// unchanged either way. A ValidationException saying the item or a key
// exceeded its maximum size is storage.ErrItemTooLarge; every other
// ValidationException, of any call, is storage.ErrInvalid. What package
// storage knows DynamoDB refuses (storage.Item.Validate,
// storage.Update.Validate: keys over 2048 and 1024 bytes, values nested
// too deep, numbers it cannot hold) is refused before sending, as the
// Pebble store refuses it. Neither code is retried by the
// SDK's retryer; throttling is, and becomes storage.ErrThrottled when the
// retries end. dynalite 4.0.0, which the tests run against, supports
// every expression used (if_not_exists inside list_append, size and
// contains on lists, SET of a map key) and evaluates the condition before
// the update: with a false condition and a missing SetKey path at once it
// answers ConditionalCheckFailedException. It checks the item's size after
// applying the update, with DynamoDB's message.
//
// Tables. CreateTable sends the tags with the request and tags the table
// again once it is ACTIVE (TagResource is idempotent, and some servers such
// as dynalite drop tags given to CreateTable). A zero Capacity means
// on-demand billing, since a provisioned table needs at least one unit of
// each. CreateTable, UpdateTable and DeleteTable return once the table is
// ACTIVE (or gone), polling with the SDK waiters; the polling delays default
// to 2 s to 20 s against AWS and to 25 ms to 1 s against an endpoint
// override, where tables appear in milliseconds (the SDK's own first delay,
// 20 s, suits neither). UpdateTable reads the table first and leaves out
// what would not change, so that running it twice is harmless: DynamoDB
// refuses an update that changes nothing.
//
// TTL. When TableSpec.TTLAttribute is set, CreateTable enables TTL on it
// once the table is ACTIVE, unless it is enabled already. An endpoint
// without TTL (dynalite answers UnknownOperationException) gets one warning
// in the log per Store, and everything else works; the attribute asked for
// is then kept in the table tag "timetable:ttl-attribute", so that
// DescribeTable reports the table as it was specified (as the embedded
// store does) and a reconciler comparing it settles. DescribeTable does not
// list that tag among the table's tags.
//
// Faults. Package dynamofault, next to this one, injects DynamoDB's
// failures (throttling, partial UnprocessedItems, 500s, dropped
// connections) into a client's HTTP traffic; the tests run BatchWrite
// and Update through it against dynalite.
//
// Metrics. With Options.Registerer set, the store exports Prometheus
// counters, labelled with the physical table and, but for the third, the
// DynamoDB operation: timetable_dynamodb_throttles_total counts attempts
// answered with a throttling error, by reason too: the ThrottlingReasons
// DynamoDB puts in ProvisionedThroughputExceededException,
// ThrottlingException and RequestLimitExceeded since 2025, reduced to a
// small fixed set (ReasonProvisionedWrite, ReasonKeyRangeWrite,
// ReasonOnDemandMaxWrite, ReasonAccountWrite, their read twins, and
// ReasonUnknown when the answer gives none);
// timetable_dynamodb_retries_total the
// attempts after the first that the retryer made,
// timetable_dynamodb_unprocessed_items_total the items BatchWriteItem
// answered as UnprocessedItems, and
// timetable_dynamodb_consumed_capacity_units_total the capacity units
// DynamoDB reports (reads, writes and queries ask for
// ReturnConsumedCapacity TOTAL). A middleware on each request's stack,
// placed inside the retry loop, sees every attempt.
//
// # Table settings beyond capacity
//
// A storage.Capacity carries a table class (TableClass), an on-demand
// maximum (OnDemandThroughput), a warm throughput (WarmThroughput; a
// table made with one is waited for until DescribeTable says it is
// ACTIVE) and, for a provisioned table, an auto scaling peak, registered
// with Application Auto Scaling target tracking (Options.AutoScaling)
// and deregistered when the table leaves it or is deleted. A TableSpec
// carries deletion protection (DeletionProtectionEnabled; DeleteTable of
// a protected table is storage.ErrProtected) and point-in-time recovery
// (UpdateContinuousBackups, dropped on an endpoint that lacks it).
// UpdateTable sends a class change and a warm throughput change each in
// an UpdateTable of its own. An endpoint that ignores table classes
// (DynamoDB Local refuses the class change alone as "Nothing to update";
// dynalite takes it and describes no class) makes a class change
// storage.ErrUnsupported, remembered: UpdateTable applies the rest, and
// sends no class change again. DynamoDB's limits on how often a table
// changes are its to enforce; their refusals are storage.ErrRefused, and
// package dynamofault's ControlPlane keeps them in tests.
//
// # Export to S3 and import from S3
//
// The Store is a storage.Exporter: ExportTable turns point-in-time
// recovery on and exports a table with ExportTableToPointInTime in
// DYNAMODB_JSON, ImportTable creates and fills a table with ImportTable
// from gzip-compressed DYNAMODB_JSON; both wait with the SDK's waiters
// (ExportCompleted, ImportCompleted) and send a client token derived
// from what they are asked, so that the same call again is the same job.
// Neither consumes the table's capacity. An endpoint without them
// (DynamoDB Local, dynalite) answers UnknownOperationException, which is
// storage.ErrUnsupported, remembered: they are not sent again.
//
// # Caveats
//
// Iterators keep the context of the Query or Scan that made them, as
// database/sql's Rows does, since Next takes none.
//
// ListTables lists the tables of the account and region; the engine starts
// it at a family's prefix and time, never at the beginning.
//
// A LimitExceededException on CreateTable is storage.ErrTableQuota only
// when ListTables counts Options.TableQuota tables or more (2,500 unless
// told, DynamoDB's default quota), and storage.ErrRefused otherwise: the
// limit on table operations at once, which the message alone tells apart
// only in words.
//
// DynamoDB's ItemCount and TableSizeBytes are refreshed about every six
// hours; DescribeTable reports them as DynamoDB does.
package dynamostore
