// Package storage is the contract between timetable's engine and the stores
// that keep its tables, in the way database/sql/driver is the contract
// between database/sql and its drivers.
//
// A Store holds named physical tables. Every table has the same shape as a
// DynamoDB table with a composite primary key: items are addressed by a
// partition key (PK) and a sort key (SK), both strings, and carry any number
// of other attributes. Items of one partition are kept in sort-key order
// (bytewise, the order DynamoDB uses for string keys), which is the only
// order the engine relies on.
//
// Two backends implement Store: the embedded Pebble store (package
// storage/pebblestore) and DynamoDB or any server speaking its API
// (package storage/dynamostore). Both pass the conformance suite in
// storage/storagetest.
//
// # Attribute values
//
// Attribute values are plain Go values of these dynamic types, which map one
// to one onto DynamoDB's native types:
//
//	nil            NULL
//	bool           BOOL
//	string         S
//	json.Number    N  (a JSON number literal; see CanonicalNumber)
//	[]byte         B
//	[]any          L  (elements of these same types)
//	map[string]any M  (values of these same types)
//
// A backend returns exactly these types, so an item read back compares equal
// (with reflect.DeepEqual) to the item written, except that numbers come back
// in the canonical form the backend stores (DynamoDB drops trailing zeros:
// 1.50 reads back as 1.5).
//
// # Limits
//
// An item must keep DynamoDB's limits (limits.go): its size, the length of
// its keys and names, how deep its values nest, the digits and magnitude
// of its numbers. Item.Validate checks them all, and every backend calls
// it before writing, so that an item one backend refuses every backend
// refuses, with an error wrapping ErrInvalid, and nothing of the request
// is written. The conformance suite holds the backends to the same
// answer at each boundary.
//
// # Concurrency
//
// All methods of a Store may be called from any number of goroutines at
// once. An Iterator belongs to the goroutine that asked for it.
//
// # Reusing iterators
//
// A Query's Iterator may also be a Requerier (requery.go): it can be
// pointed at another partition or range of its table, reading the
// snapshot of its first query, in place of a new Query. Pebble's
// iterators are, since making one takes the database's state and builds
// a merge of its memtables and levels, which an aggregate of every
// series would pay for each of thousands of partitions; DynamoDB's are
// not, and a reader that finds no Requerier queries anew. A reader that
// requeries holds a snapshot for as long as it keeps the iterator: an
// aggregate keeps one per partition of a series, per worker, for the
// aggregate's length.
package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Store is a set of tables: everything a backend offers, which the
// engine, the one user of all of it, takes. Other users name the part
// they need (Tables, Items, Scanner), as registry.Store, tenant.Store,
// archive.Store and lifecycle.Store do. See the package documentation
// for the rules every implementation follows.
type Store interface {
	Tables
	Items
	Scanner

	// Close releases the store's resources. It is safe to call twice.
	Close() error
}

// Tables administers a store's tables: the part of a Store the lifecycle
// manager needs.
type Tables interface {
	// CreateTable creates a table and returns once it is ACTIVE and ready
	// for reads and writes. Creating a table that exists already, or that
	// another caller is creating, is not an error: CreateTable waits for
	// it to be ACTIVE and returns ErrTableExists, so that callers racing to
	// create one table all end up with it.
	CreateTable(ctx context.Context, spec TableSpec) error

	// DescribeTable returns what the store knows of a table, or an error
	// wrapping ErrTableNotFound.
	DescribeTable(ctx context.Context, name string) (TableInfo, error)

	// ListTables calls fn with the name of every table whose name sorts
	// strictly after the argument after (all tables when after is ""), in
	// ascending bytewise order, until fn returns false or the names run
	// out. A backend fetches names lazily, page by page, so a caller that
	// stops early does not pay for the rest of the listing.
	ListTables(ctx context.Context, after string, fn func(name string) bool) error

	// UpdateTable changes a table's billing mode, provisioned capacity,
	// class, throughput limits, tags, deletion protection or
	// point-in-time recovery, or enables TTL on an attribute (fields left zero are
	// unchanged). Running the same update twice is harmless. It returns an error wrapping
	// ErrTableNotFound for an unknown table, and ErrRefused when the store
	// declines the change for now (a DynamoDB limit on decreases, switches
	// to on demand or class changes,
	// a table that is still being updated): the caller may try again
	// later.
	UpdateTable(ctx context.Context, name string, u TableUpdate) error

	// DeleteTable deletes a table and all its items and frees the space
	// they took, and returns once the table is gone. It returns an error
	// wrapping ErrTableNotFound for an unknown table, and ErrProtected
	// for a table with deletion protection on, where the store enforces
	// it.
	DeleteTable(ctx context.Context, name string) error
}

// Items reads and writes items: the part of a Store a table's users need.
type Items interface {
	// BatchWrite puts every item into the table, replacing any item with
	// the same key. It returns nil only once every item is durable. On
	// failure it returns a *BatchWriteError that lists exactly which items were
	// not written; the others are durable. Items in one call must have
	// distinct keys. When an item is invalid (Item.Validate) no item is
	// written, and the error wraps ErrInvalid. An item Item.Checked
	// returned is not validated again (Item.Valid), and a backend may
	// store its numbers as they are when Checked found them canonical
	// (Item.NumbersCanonical).
	BatchWrite(ctx context.Context, table string, items []Item) error

	// BatchDelete deletes the items with the given keys from the table,
	// returning nil once every deletion is durable; a key with no item is
	// no error. On failure it returns a *BatchWriteError whose Unwritten
	// lists the indexes of the keys whose items may remain. A key
	// DynamoDB would refuse (empty, too long, not UTF-8) fails the call
	// with an error wrapping ErrInvalid, and nothing is deleted.
	BatchDelete(ctx context.Context, table string, keys []Key) error

	// GetItem returns the item with the given key, or an error wrapping
	// ErrItemNotFound. It sees every write and Update that returned
	// before it was called (a strongly consistent read), unless the store
	// was opened to read eventually consistently.
	GetItem(ctx context.Context, table, pk, sk string) (Item, error)

	// Update applies a conditional update to one item (see Update) and
	// returns nil once the change is durable. It returns an error wrapping
	// ErrConditionFailed when a condition does not hold, ErrItemTooLarge
	// when the item would grow past MaxItemSize, and ErrTableNotFound for
	// an unknown table; in each case the item is unchanged. Updates of one
	// item are atomic with respect to each other; an Update racing a
	// BatchWrite of the same item may lose the BatchWrite's item on some
	// backends, so callers keep the two apart.
	Update(ctx context.Context, u Update) error

	// Query returns the items of one partition whose sort keys lie in the
	// request's range, in sort-key order. See Query for the fields.
	Query(ctx context.Context, q Query) Iterator
}

// Scanner reads whole tables: the part of a Store that archives and
// listings of a meta table need.
type Scanner interface {
	// Scan returns every item of a table, in no particular order.
	Scan(ctx context.Context, table string) Iterator

	// ScanAfter returns the items Scan returns after the item whose key
	// is after, in the same order (DynamoDB's ExclusiveStartKey): a scan
	// stopped after an item resumes there, in another process too. The
	// item need not exist any more.
	ScanAfter(ctx context.Context, table string, after Key) Iterator

	// ScanSegment returns the items of one segment of a table (see
	// Segment), in the order ScanAfter would go through them: several
	// goroutines scan the segments of one table in parallel, and each
	// segment stopped after an item resumes there (Segment.After). The
	// segments 0 to Total-1 of one Total hold every item of a table that
	// is not written to meanwhile exactly once.
	ScanSegment(ctx context.Context, table string, seg Segment) Iterator
}

// Segment names one of the parts a parallel scan divides a table into:
// DynamoDB's Segment and TotalSegments, which split a table by the hash
// of its partition keys; Pebble splits a table's key range.
type Segment struct {
	// Index is the segment, from 0 to Total-1.
	Index int
	// Total is the number of segments, at least 1 (the whole table) and
	// at most MaxSegments.
	Total int
	// After, when not zero, resumes the segment after the item of that
	// key, as ScanAfter does; the item need not exist any more.
	After Key
	// Eventual allows eventually consistent reads, which cost half as
	// much on DynamoDB: for a table that takes no more writes (its write
	// month and grace are over) they return the same items. A backend
	// whose reads are always consistent ignores it.
	Eventual bool
}

// MaxSegments is the most segments a parallel scan may have (DynamoDB's
// limit on TotalSegments).
const MaxSegments = 1000000

// Validate reports a segment that names no part of a table.
func (s Segment) Validate() error {
	if s.Total < 1 || s.Total > MaxSegments || s.Index < 0 || s.Index >= s.Total {
		return fmt.Errorf("%w: scan segment %d of %d", ErrInvalid, s.Index, s.Total)
	}
	return nil
}

// Names of the key attributes as a backend stores them (DynamoDB's
// attribute names), and as item sizes count them.
const (
	PKAttr = "pk"
	SKAttr = "sk"
)

// Key is the primary key of an item.
type Key struct {
	PK, SK string
}

// Item is one stored item: its key and its other attributes. Attrs never
// holds the key attributes themselves.
type Item struct {
	PK    string
	SK    string
	Attrs map[string]any

	// checked is set by Checked: the item was valid with these lengths.
	checked checkMark
	// canonical is set by Checked when every number was in canonical
	// form (NumbersCanonical).
	canonical bool
}

// A checkMark is the shape of an item Checked found valid: the lengths
// of its keys and how many attributes it had, each one more, so that the
// zero mark is of no item.
type checkMark struct{ pk, sk, attrs int }

// mark returns the item's shape as checked marks it.
func (it Item) mark() checkMark { return checkMark{len(it.PK) + 1, len(it.SK) + 1, len(it.Attrs) + 1} }

// Key returns the item's key.
func (it Item) Key() Key { return Key{PK: it.PK, SK: it.SK} }

// Query selects items of one partition by a range of sort keys.
type Query struct {
	// Table and PK name the partition.
	Table string
	PK    string
	// Low and High bound the sort keys, both inclusive. An empty High
	// means no upper bound.
	Low, High string
	// After, when not empty, resumes a query: only items strictly past
	// After in the direction of the query are returned (after it when
	// ascending, before it when descending), like DynamoDB's
	// ExclusiveStartKey. After need not be the key of an existing item.
	After string
	// Desc returns items in descending sort-key order.
	Desc bool
	// Limit stops the iterator after that many items; 0 means no limit.
	// A backend uses it to size its requests, so a small limit reads
	// little.
	Limit int
	// Attrs, when not nil, lists the only attributes to return besides the
	// key (a projection). Attributes an item lacks are absent.
	Attrs []string
	// Filter, when not nil, returns only the items it matches (see
	// Filter). Limit then bounds the items examined, matching or not, as
	// DynamoDB's Limit does, so that a selective filter reads a bounded
	// part of the partition per query: the iterator's Resume says where
	// to go on.
	Filter *Filter
	// Eventual allows an eventually consistent read, which costs half as
	// much on DynamoDB: for a table that takes no more writes (its write
	// month and grace are over, or it is fenced) it returns the same
	// items. A backend whose reads are always consistent ignores it.
	Eventual bool
}

// Iterator walks the items a Query or Scan selected. Use it as
//
//	it := store.Query(ctx, q)
//	defer it.Close()
//	for it.Next() {
//		item := it.Item()
//	}
//	if err := it.Err(); err != nil { ... }
//
// Items are fetched lazily. The Item returned is owned by the caller and
// stays valid after the next call to Next.
//
// A reader that uses each value once, at once, as an aggregate does, can
// skip building Items: SortKey and Attrs hand out the current item's sort
// key and attributes as the store holds them, valid only until the next
// call to Next (as database/sql's RawBytes are), and a store decodes an
// item only when Item asks for it.
type Iterator interface {
	// Next advances to the next item and reports whether there is one.
	Next() bool
	// Item returns the current item.
	Item() Item
	// SortKey returns the current item's sort key. It may share the
	// store's buffers: it is valid until the next call to Next or Close,
	// and a caller that keeps it copies it (strings.Clone).
	SortKey() string
	// Attrs calls fn with the name and value of each of the current
	// item's attributes that Item would hold, in no particular order,
	// until fn returns false. Names, and values of type string,
	// json.Number and []byte, and those inside lists and maps, may share
	// the store's buffers: they are valid only during the call, a
	// caller that keeps one copies it (CloneValue), and none writes
	// into a []byte. It returns an error for an item the store cannot
	// decode.
	Attrs(fn func(name string, v any) bool) error
	// Err returns the error that stopped the iteration, if any.
	Err() error
	// Resume, once Next has returned false and Err is nil, reports
	// whether the query stopped at its Limit before the end of its range
	// and the sort key of the last item it examined, which as a Query's
	// After goes on from there. With a Filter that key may be of an item
	// that did not match. A query that ran to the end of its range
	// returns "", false.
	Resume() (after string, stopped bool)
	// Close releases the iterator. It is safe to call twice and returns
	// the same error as Err.
	Close() error
}

// Billing is a table's billing mode.
type Billing string

// Billing modes, spelled as DynamoDB spells them.
const (
	Provisioned Billing = "PROVISIONED"
	OnDemand    Billing = "PAY_PER_REQUEST"
)

// Class is a table's class, spelled as DynamoDB spells it. The class
// decides the price of storage against the price of reads and writes:
// Standard-IA stores for about 60% less and reads and writes for about
// 25% more (DynamoDB pricing, "table classes"). DynamoDB lets a table
// change its class at most twice in 30 days (Developer Guide, "Table
// classes"); the lifecycle manager keeps count (registry.Entry).
//
// Configuration files, planner options, CLI flags and listings name a
// class by its Name ("standard", "infrequent_access"), read back by
// ParseClass; JSON answers (the HTTP API, `timetable plan --format
// json`) carry the Class itself.
type Class string

// Table classes.
const (
	// ClassStandard is DynamoDB's default class; "" means it too.
	ClassStandard Class = "STANDARD"
	// ClassInfrequentAccess is Standard-IA, for tables mostly stored and
	// seldom read: cold tiers.
	ClassInfrequentAccess Class = "STANDARD_INFREQUENT_ACCESS"
)

// ParseClass reads a table class as people write it, in configuration
// files, planner options and CLI flags: "standard" or
// "infrequent_access", the canonical names (Class.Name), in any case.
// It takes as aliases "standard_ia" and "standard_infrequent_access"
// (and so DynamoDB's own spelling) for infrequent_access, which earlier
// versions accepted. The empty string is the zero Class, which leaves
// the choice to the caller's default.
func ParseClass(s string) (Class, error) {
	switch strings.ToLower(s) {
	case "":
		return "", nil
	case "standard":
		return ClassStandard, nil
	case "infrequent_access", "standard_ia", "standard_infrequent_access":
		return ClassInfrequentAccess, nil
	}
	return "", fmt.Errorf("class %q: must be standard or infrequent_access", s)
}

// Name returns the canonical name of a class, as ParseClass reads it and
// configuration files spell it: "infrequent_access" for
// ClassInfrequentAccess, "standard" otherwise ("" is DynamoDB's default
// class, standard).
func (c Class) Name() string {
	if c == ClassInfrequentAccess {
		return "infrequent_access"
	}
	return "standard"
}

// Capacity is what a table pays for: a billing mode and, when provisioned,
// read and write capacity units; a table class; and the throughput
// limits that go with the billing mode. A zero Capacity means on-demand
// billing, the standard class and no limits.
type Capacity struct {
	Billing Billing
	Read    int64
	Write   int64
	// Class is the table class; "" is ClassStandard.
	Class Class
	// MaxRead and MaxWrite, when not zero, bound an on-demand table's
	// throughput in read and write request units a second (DynamoDB's
	// OnDemandThroughput, "maximum throughput for on-demand tables"): a
	// guard against a runaway scan or backfill. On a provisioned table
	// they are the peak that auto scaling may raise capacity to, from
	// the floor Read and Write (Application Auto Scaling target
	// tracking); zero means no auto scaling.
	MaxRead  int64
	MaxWrite int64
	// WarmRead and WarmWrite, when not zero, are the warm throughput an
	// on-demand table is prepared for, in units a second (DynamoDB's
	// WarmThroughput): a new on-demand table takes 4,000 writes and
	// 12,000 reads a second at once, and throttles above that until it
	// has grown.
	WarmRead  int64
	WarmWrite int64
}

// Normal returns c as a store records it, and DescribeTable reports it on
// every backend: the class spelled out, no
// provisioned units when on demand, and no warm throughput or maximum
// that the billing mode does not take.
func (c Capacity) Normal() Capacity {
	if c.Class == "" {
		c.Class = ClassStandard
	}
	if c.Billing == "" && c.Read == 0 && c.Write == 0 {
		c.Billing = OnDemand
	}
	if c.Billing == OnDemand {
		c.Read, c.Write = 0, 0
	} else {
		c.WarmRead, c.WarmWrite = 0, 0
	}
	return c
}

// TableSpec describes a table to create.
type TableSpec struct {
	Name     string
	Capacity Capacity
	// Tags are labels recorded with the table (DynamoDB tags; on Pebble,
	// in its catalog) and come back in TableInfo, where the store keeps
	// them: an endpoint without tagging (DynamoDB Local) keeps none, and a
	// failure to tag does not fail the table's creation. timetable writes
	// a table's family, period, tier and shard count there for people and
	// cost reports; its own record of them is the table registry.
	Tags map[string]string
	// TTLAttribute, when set, is the attribute holding an item's expiry in
	// Unix seconds; the store enables TTL on it where it can.
	TTLAttribute string
	// DeletionProtection, when set, makes the store refuse DeleteTable
	// (with an error wrapping ErrProtected) until an UpdateTable lifts it
	// (DynamoDB's DeletionProtectionEnabled). A store may only record it
	// (Pebble does), so callers lift it before deleting.
	DeletionProtection bool
	// PITRDays, when not zero, turns on point-in-time recovery with that
	// recovery period in days, 1 to 35 (DynamoDB's continuous backups);
	// a store without it records the setting.
	PITRDays int
}

// TableUpdate is a change to a table. Zero fields are left as they are.
type TableUpdate struct {
	Capacity *Capacity
	// Tags are added to the table's tags, replacing those of the same key.
	Tags map[string]string
	// TTLAttribute, when set, enables TTL on that attribute (expiry in
	// Unix seconds), as TableSpec.TTLAttribute does at creation; a store
	// that cannot expire items records it, so DescribeTable reports it.
	TTLAttribute string
	// DeletionProtection, when not nil, turns deletion protection on or
	// off.
	DeletionProtection *bool
	// PITRDays, when not nil, sets point-in-time recovery: its recovery
	// period in days (1 to 35), or 0 to turn it off.
	PITRDays *int
}

// Status is a table's state, spelled as DynamoDB spells it.
type Status string

// Table states.
const (
	StatusCreating Status = "CREATING"
	StatusActive   Status = "ACTIVE"
	StatusUpdating Status = "UPDATING"
	StatusDeleting Status = "DELETING"
)

// TableInfo is what a store knows of a table.
type TableInfo struct {
	TableSpec
	Status    Status
	CreatedAt time.Time
	// ItemCount and SizeBytes are the store's estimates (DynamoDB updates
	// them about every six hours); -1 when unknown.
	ItemCount int64
	SizeBytes int64
}

// Errors a Store returns, wrapped with the operation and the table name.
var (
	ErrTableNotFound = errors.New("timetable: table not found")
	ErrTableExists   = errors.New("timetable: table already exists")
	ErrItemNotFound  = errors.New("timetable: item not found")
	// ErrRefused marks a request the store declined for now (a control
	// plane limit, a table busy with another change); it may succeed later.
	ErrRefused = errors.New("timetable: refused by the store, try later")
	// ErrTableQuota marks a CreateTable refused because the account has
	// as many tables as its quota allows (DynamoDB's soft quota is 2,500
	// a region). Unlike ErrRefused, waiting does not cure it: raise the
	// quota, or keep fewer tables (a shorter retention, longer periods).
	ErrTableQuota = errors.New("timetable: the account's table quota is reached")
	// ErrThrottled marks a request the store declined for lack of capacity
	// after the backend's own retries ran out.
	ErrThrottled = errors.New("timetable: throttled by the store")
	// ErrInvalid marks a request the store refuses as it is, and will
	// refuse however often it is sent: an item or value DynamoDB would not
	// store (Item.Validate), an update it would not apply. Nothing of the
	// request was written.
	ErrInvalid = errors.New("timetable: invalid item")
	// ErrProtected marks a DeleteTable refused because the table has
	// deletion protection on: lift it with UpdateTable first.
	ErrProtected = errors.New("timetable: table has deletion protection")
	// ErrClosed is returned by every call on a store after Close.
	ErrClosed = errors.New("timetable: store closed")
	// ErrUnavailable marks a request the store could not serve because it
	// could not be reached or failed on its side (a connection refused,
	// reset or timed out; a 5xx answer) after the backend's own retries
	// ran out. The request may succeed later, unchanged.
	ErrUnavailable = errors.New("timetable: store unavailable")
	// ErrDamaged marks stored data that does not read back as it was
	// written: a file of an archive that is missing, or whose size,
	// checksum or row count differs from its manifest's (package
	// archive's cold tier). The same request fails the same way until an
	// operator repairs the data, so it is not retried.
	ErrDamaged = errors.New("timetable: stored data damaged")
)

// BatchWriteError reports a BatchWrite that did not write every item.
type BatchWriteError struct {
	// Table is the table written to.
	Table string
	// Unwritten holds the indexes, in the caller's slice, of the items that
	// were not written, in ascending order. Every other item is durable.
	Unwritten []int
	// Err is the cause.
	Err error
}

func (e *BatchWriteError) Error() string {
	return fmt.Sprintf("write to table %q: %d items not written: %v", e.Table, len(e.Unwritten), e.Err)
}

// Unwrap returns the cause.
func (e *BatchWriteError) Unwrap() error { return e.Err }
