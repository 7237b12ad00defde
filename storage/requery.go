package storage

import "context"

// Requerier is an optional interface of a Query's Iterator: a store
// whose iterators cost more to make than to point elsewhere (Pebble's,
// which take the database's state and build a merge of its levels each)
// lets a reader of many partitions, one after another, move one
// iterator from partition to partition. An aggregate of every series
// reads a few partitions of each of thousands of series so (see
// Reusing iterators in the package documentation). A store whose
// iterators are not Requeriers (DynamoDB's, where each query is its own
// requests anyway) is simply queried again.
type Requerier interface {
	// Requery makes the iterator that of q, a query of the same table
	// as the one that made it, as Query(ctx, q) would return it, except
	// that it reads the snapshot the iterator read before: the store's
	// state when the first query was made, not when Requery is called.
	// It reports false, leaving the iterator as it was, when it cannot:
	// q is of another table, or the iterator failed or was closed; the
	// caller then closes it and queries anew. The items and sort keys
	// the iterator handed out before are not valid after it.
	Requery(ctx context.Context, q Query) bool
}
