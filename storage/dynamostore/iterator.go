package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// page is one answer of Query or Scan.
type page struct {
	items []map[string]types.AttributeValue
	// more tells whether another page follows (a LastEvaluatedKey).
	more bool
	// examined is DynamoDB's ScannedCount: the items the page read,
	// before a filter.
	examined int
	// lastSK is the sort key of the LastEvaluatedKey, if any.
	lastSK string
}

// fetchFunc returns the next page; budget, when positive, is the most
// items it may examine (the request's Limit).
type fetchFunc func(ctx context.Context, budget int) (page, error)

// iterator walks pages of items fetched one at a time, when the previous
// one is used up. It keeps the context of the Query or Scan that created
// it, as database/sql's Rows does, since Next takes none.
type iterator struct {
	ctx   context.Context
	store *Store
	fetch fetchFunc
	// limit stops the iteration after that many items, or with filtered
	// set that many items examined; 0 for none.
	limit    int
	filtered bool

	items    []map[string]types.AttributeValue
	more     bool
	n        int    // items returned
	examined int    // items examined by the pages fetched
	lastSK   string // of the last page's LastEvaluatedKey
	// raw is the current item as DynamoDB sent it, and sk its sort key;
	// cur is it unmarshalled, once decoded is set.
	raw     map[string]types.AttributeValue
	sk      string
	cur     storage.Item
	decoded bool
	done    bool
	// IteratorEnd holds the error that stopped the iteration, or, when
	// the limit stopped it, the sort key of the last item examined.
	storage.IteratorEnd
}

var _ storage.Iterator = (*iterator)(nil)

// newIterator returns an iterator whose first page fetch gets.
func newIterator(ctx context.Context, s *Store, limit int, filtered bool, fetch fetchFunc) *iterator {
	return &iterator{ctx: ctx, store: s, fetch: fetch, limit: limit, filtered: filtered, more: true}
}

// errIterator returns an iterator that yields nothing and err.
func errIterator(err error) *iterator {
	return &iterator{IteratorEnd: storage.IteratorEnd{Failure: err}, done: true}
}

// emptyIterator returns an iterator that yields nothing.
func emptyIterator() *iterator {
	return &iterator{done: true}
}

// Next advances to the next item, fetching the next page when the current
// one is used up.
func (it *iterator) Next() bool {
	if it.done || it.Failure != nil {
		return false
	}
	if !it.filtered && it.limit > 0 && it.n >= it.limit {
		it.stop(it.sk)
		return false
	}
	for len(it.items) == 0 {
		if !it.more {
			it.done = true
			return false
		}
		if it.filtered && it.limit > 0 && it.examined >= it.limit {
			it.stop(it.lastSK)
			return false
		}
		if it.store.gate.Closed() {
			it.Failure = storage.ErrClosed
			return false
		}
		budget := 0
		if it.limit > 0 {
			budget = it.limit - it.n
			if it.filtered {
				budget = it.limit - it.examined
			}
		}
		p, err := it.fetch(it.ctx, budget)
		if err != nil {
			it.Failure = err
			return false
		}
		it.items, it.more, it.lastSK = p.items, p.more, p.lastSK
		it.examined += p.examined
	}
	raw := it.items[0]
	it.items[0] = nil
	it.items = it.items[1:]
	key, ok := itemKey(raw)
	if !ok {
		it.Failure = fmt.Errorf("item without string key attributes %q and %q", storage.PKAttr, storage.SKAttr)
		return false
	}
	it.raw, it.sk, it.decoded = raw, key[1], false
	it.n++
	return true
}

// stop ends the iteration at the limit, after the item of sort key sk.
func (it *iterator) stop(sk string) {
	it.done, it.Limited, it.ResumeAfter = true, it.more || len(it.items) > 0, sk
}

// Item returns the current item, which it unmarshals. The caller owns
// it. An item of a type timetable does not store (a set) ends the
// iteration: Item returns a zero Item, and Err the error.
func (it *iterator) Item() storage.Item {
	if !it.decoded && it.raw != nil && it.Failure == nil {
		item, err := unmarshalItem(it.raw)
		if err != nil {
			it.Failure, it.done = err, true
		}
		it.cur, it.decoded = item, true
	}
	return it.cur
}

// SortKey returns the current item's sort key.
func (it *iterator) SortKey() string { return it.sk }

// Attrs calls fn with the current item's attributes, converted one by
// one from DynamoDB's types, without a map of them.
func (it *iterator) Attrs(fn func(name string, v any) bool) error {
	for name, av := range it.raw {
		if name == storage.PKAttr || name == storage.SKAttr {
			continue
		}
		v, err := fromAttributeValue(av)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", name, err)
		}
		if !fn(name, v) {
			return nil
		}
	}
	return nil
}

// Close releases the page held. It is safe to call twice.
func (it *iterator) Close() error {
	it.done = true
	it.items = nil
	return it.Failure
}

// lastSortKey returns the sort key of a LastEvaluatedKey, "" for none.
func lastSortKey(key map[string]types.AttributeValue) string {
	if sk, ok := key[storage.SKAttr].(*types.AttributeValueMemberS); ok {
		return sk.Value
	}
	return ""
}
