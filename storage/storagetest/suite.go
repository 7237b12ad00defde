// Package storagetest is the conformance suite every storage.Store backend
// runs, in the way Go's testing/fstest checks an fs.FS: one set of tests
// that turns each promise in package storage's doc comments into a check.
//
// A backend's test calls Run (or RunWithOptions) with a function that opens
// a fresh store:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store {
//			s, err := mystore.Open(t.TempDir())
//			require.NoError(t, err)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Decisions:
//
//   - Every subtest opens its own store and names its tables after itself
//     (t.Name() sanitised to DynamoDB's table-name alphabet), a random run
//     id and a counter, so the suite can run against a shared DynamoDB-API
//     server, twice in a row, next to other packages' tests. Listing
//     checks filter on their own prefix.
//   - Creating a table is slow on DynamoDB, so subtests share a table where
//     the checks do not interfere (one table for the batch sizes, one
//     fixture table for all the range cases, one for every limit). The
//     suite creates about 26 tables, seven of them for the listing order;
//     the listing check that needs more than a hundred runs only with
//     Options.ManyTables and without -short.
//   - Nothing depends on timing: the suite never sleeps and never asserts
//     on durations.
//   - Tables a subtest creates are deleted in its cleanup, so a long-lived
//     server does not fill up.
//   - Numbers are compared by value (1.50 equals 1.5, 1e3 equals 1000):
//     package storage lets a backend return the canonical form it stores.
//     Empty and nil byte slices compare equal, and so do an empty and a
//     nil attribute map: JSON-based protocols cannot tell them apart.
//     Everything else must round-trip exactly under reflect.DeepEqual,
//     Go type included.
package storagetest

import (
	"sync/atomic"
	"testing"

	"github.com/timetabledb/timetable/storage"
)

// Options tunes the suite to what a backend can afford. The zero value runs
// every check that is cheap on any backend.
type Options struct {
	// ManyTables says that creating a table is cheap, so the suite may
	// create more than a hundred of them to check that ListTables pages
	// correctly (DynamoDB returns at most 100 names a page). The check
	// still skips under -short.
	ManyTables bool

	// Reopen, when set, returns a new store over the same data as s (the
	// same directory, the same server); the suite has closed s already.
	// The durability check writes items, closes the store, reopens it and
	// reads them back. When Reopen is nil, that check is skipped.
	Reopen func(t *testing.T, s storage.Store) storage.Store

	// NoTags says that the store keeps no tags (DynamoDB Local has no
	// tagging): tables are made and updated without them, and
	// DescribeTable reports none. Tags are labels only (storage.TableSpec),
	// so the suite then checks that asking for them changes nothing else.
	NoTags bool

	// CaseInsensitiveNames says that the store takes table names that
	// differ only in letter case for one name (DynamoDB Local), unlike
	// DynamoDB: the listing check then makes no such pair.
	CaseInsensitiveNames bool
}

// Run runs the conformance suite with the default options. open returns a
// new, empty or shared store for one subtest; it is called once per subtest
// and should register the store's Close with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	RunWithOptions(t, open, Options{})
}

// RunWithOptions runs the conformance suite. See Run for open.
func RunWithOptions(t *testing.T, open func(t *testing.T) storage.Store, opts Options) {
	s := &suite{open: open, opts: opts, run: newRunID(t)}
	groups := []struct {
		name  string
		tests []subtest
	}{
		{"Tables", s.tableTests()},
		{"Items", s.itemTests()},
		{"Query", s.queryTests()},
		{"Scan", s.scanTests()},
		{"Filter", s.filterTests()},
		{"Update", s.updateTests()},
		{"Limits", s.limitTests()},
		{"Durability", s.durabilityTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, st.fn)
			}
		})
	}
}

// subtest is one named check of the suite.
type subtest struct {
	name string
	fn   func(t *testing.T)
}

// suite carries what every check needs: how to open a store and how to
// name tables.
type suite struct {
	open func(t *testing.T) storage.Store
	opts Options
	run  string
	// seq numbers the table-name prefixes this run hands out.
	seq atomic.Int64
}
