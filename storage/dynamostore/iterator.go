package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// fetchFunc returns the next page of items and whether another page
// follows.
type fetchFunc func(ctx context.Context) (items []map[string]types.AttributeValue, more bool, err error)

// iterator walks pages of items fetched one at a time, when the previous
// one is used up. It keeps the context of the Query or Scan that created
// it, as database/sql's Rows does, since Next takes none.
type iterator struct {
	ctx   context.Context
	store *Store
	fetch fetchFunc
	// limit stops the iteration after that many items; 0 for none.
	limit int

	page []map[string]types.AttributeValue
	more bool
	n    int
	cur  storage.Item
	err  error
	done bool
}

var _ storage.Iterator = (*iterator)(nil)

// newIterator returns an iterator whose first page fetch gets.
func newIterator(ctx context.Context, s *Store, limit int, fetch fetchFunc) *iterator {
	return &iterator{ctx: ctx, store: s, fetch: fetch, limit: limit, more: true}
}

// errIterator returns an iterator that yields nothing and err.
func errIterator(err error) *iterator {
	return &iterator{err: err, done: true}
}

// emptyIterator returns an iterator that yields nothing.
func emptyIterator() *iterator {
	return &iterator{done: true}
}

// Next advances to the next item, fetching the next page when the current
// one is used up.
func (it *iterator) Next() bool {
	if it.done || it.err != nil {
		return false
	}
	if it.limit > 0 && it.n >= it.limit {
		it.done = true
		return false
	}
	for len(it.page) == 0 {
		if !it.more {
			it.done = true
			return false
		}
		if it.store.closed() {
			it.err = storage.ErrClosed
			return false
		}
		it.page, it.more, it.err = it.fetch(it.ctx)
		if it.err != nil {
			return false
		}
	}
	item, err := unmarshalItem(it.page[0])
	it.page[0] = nil
	it.page = it.page[1:]
	if err != nil {
		it.err = err
		return false
	}
	it.cur = item
	it.n++
	return true
}

// Item returns the current item. The caller owns it.
func (it *iterator) Item() storage.Item { return it.cur }

// Err returns the error that stopped the iteration, if any.
func (it *iterator) Err() error { return it.err }

// Close releases the page held. It is safe to call twice.
func (it *iterator) Close() error {
	it.done = true
	it.page = nil
	return it.err
}
