package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/timetabledb/timetable/storage"
)

// GetItem reads one item.
func (s *Store) GetItem(ctx context.Context, tableName, pk, sk string) (storage.Item, error) {
	if err := s.gate.Enter(); err != nil {
		return storage.Item{}, fmt.Errorf("get item from table %q: %w", tableName, err)
	}
	defer s.gate.Exit()
	if err := ctx.Err(); err != nil {
		return storage.Item{}, fmt.Errorf("get item from table %q: %w", tableName, err)
	}
	t := s.catalog.lookup(tableName)
	if t == nil {
		return storage.Item{}, fmt.Errorf("get item from table %q: %w", tableName, storage.ErrTableNotFound)
	}
	val, closer, err := s.db.Get(appendItemKey(nil, t.id, pk, sk))
	if errors.Is(err, pebble.ErrNotFound) {
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, tableName, storage.ErrItemNotFound)
	}
	if err != nil {
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, tableName, err)
	}
	d := decoder{s: string(val)}
	closer.Close()
	attrs, err := d.item()
	if err != nil {
		return storage.Item{}, fmt.Errorf("get item %q/%q from table %q: %w", pk, sk, tableName, err)
	}
	return storage.Item{PK: pk, SK: sk, Attrs: attrs}, nil
}

// Query returns an iterator over the partition's items in the query's
// range, read from one consistent snapshot taken when Query is called.
func (s *Store) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if err := s.gate.Enter(); err != nil {
		return errIterator(fmt.Errorf("query table %q: %w", q.Table, err))
	}
	if q.Filter != nil {
		if err := q.ValidateFilter(); err != nil {
			s.gate.Exit()
			return errIterator(fmt.Errorf("query table %q: %w", q.Table, err))
		}
	}
	t := s.catalog.lookup(q.Table)
	if t == nil {
		s.gate.Exit()
		return errIterator(fmt.Errorf("query table %q: %w", q.Table, storage.ErrTableNotFound))
	}
	it := &iterator{table: q.Table, tableID: t.id}
	if !it.point(ctx, q) {
		s.gate.Exit()
		return it
	}
	return s.open(it, it.lower, it.upper)
}

// A Query's iterator moves from partition to partition.
var _ storage.Requerier = (*iterator)(nil)

// Requery points the iterator at q, a query of its table, in the
// snapshot it reads (storage.Requerier): it moves its Pebble iterator's
// bounds (SetBounds), where Query would make a new one. It reports false
// for a query of another table, and for an iterator that failed, was
// closed, is a scan's or has no Pebble iterator (a query whose range held
// no keys).
func (it *iterator) Requery(ctx context.Context, q storage.Query) bool {
	if it.pi == nil || it.scan || it.Failure != nil || q.Table != it.table {
		return false
	}
	if q.Filter != nil && q.ValidateFilter() != nil {
		return false // Query reports it
	}
	if it.point(ctx, q) {
		it.pi.SetBounds(it.lower, it.upper)
		it.pi.SetContext(ctx)
	}
	return true
}

// point makes the iterator that of q, from its first item, and sets its
// bounds (lower, upper) to q's keys in its table (tableID): the
// partition's prefix with Low, and with High and a zero byte or the
// prefix's successor, narrowed by After. It reports false, the iterator
// done, when the range holds no keys.
func (it *iterator) point(ctx context.Context, q storage.Query) bool {
	buf := appendPartitionPrefix(it.bounds[:0], it.tableID, q.PK)
	prefix := len(buf)
	buf = append(append(buf, buf[:prefix]...), q.Low...)
	lowEnd := len(buf)
	if q.High == "" {
		// The prefix's successor: it starts with dataPrefix, so it is
		// not all 0xff.
		i := prefix - 1
		for buf[i] == 0xff {
			i--
		}
		buf = append(buf, buf[:i+1]...)
		buf[len(buf)-1]++
	} else {
		buf = append(append(append(buf, buf[:prefix]...), q.High...), 0)
	}
	highEnd := len(buf)
	if q.After != "" {
		buf = append(append(buf, buf[:prefix]...), q.After...)
		if !q.Desc {
			buf = append(buf, 0)
		}
	}
	it.bounds = buf
	lower, upper := buf[prefix:lowEnd], buf[lowEnd:highEnd]
	if q.After != "" {
		after := buf[highEnd:]
		if q.Desc {
			upper = minKey(upper, after)
		} else {
			lower = maxKey(lower, after)
		}
	}
	it.lower, it.upper = lower, upper
	*it = iterator{
		ctx:     ctx,
		table:   q.Table,
		tableID: it.tableID,
		pi:      it.pi,
		release: it.release,
		pk:      q.PK,
		skFrom:  prefix,
		desc:    q.Desc,
		limit:   q.Limit,
		attrs:   q.Attrs,
		filter:  q.Filter,
		bounds:  it.bounds,
		lower:   it.lower,
		upper:   it.upper,
		buf:     it.buf,
	}
	if q.Filter != nil && q.Attrs != nil {
		it.matched = q.Filter.AppendAttrs(slices.Clone(q.Attrs))
	}
	if bytes.Compare(lower, upper) >= 0 {
		it.done = true
		return false
	}
	return true
}

// Scan returns an iterator over every item of the table, in key order,
// read from one consistent snapshot taken when Scan is called.
func (s *Store) Scan(ctx context.Context, tableName string) storage.Iterator {
	return s.ScanAfter(ctx, tableName, storage.Key{})
}

// ScanAfter is Scan from the item after the key, in key order as Scan
// goes.
func (s *Store) ScanAfter(ctx context.Context, tableName string, after storage.Key) storage.Iterator {
	if err := s.gate.Enter(); err != nil {
		return errIterator(fmt.Errorf("scan table %q: %w", tableName, err))
	}
	t := s.catalog.lookup(tableName)
	if t == nil {
		s.gate.Exit()
		return errIterator(fmt.Errorf("scan table %q: %w", tableName, storage.ErrTableNotFound))
	}
	lower, upper := tableSpan(t.id)
	if after != (storage.Key{}) {
		// The item key is the sort key verbatim at its end: the key with
		// a zero byte appended is the first after it.
		lower = append(appendItemKey(nil, t.id, after.PK, after.SK), 0)
	}
	return s.open(&iterator{ctx: ctx, table: tableName, scan: true}, lower, upper)
}

// ScanSegment splits the table's key range into Total contiguous ranges
// between its first and last keys (read as numbers, from their first
// differing byte), and scans range Index from seg.After. The split
// depends on the table's first and last items, so the segments of a
// table written to between the scans of its segments need not add up.
func (s *Store) ScanSegment(ctx context.Context, tableName string, seg storage.Segment) storage.Iterator {
	if err := seg.Validate(); err != nil {
		return errIterator(fmt.Errorf("scan table %q: %w", tableName, err))
	}
	if err := s.gate.Enter(); err != nil {
		return errIterator(fmt.Errorf("scan table %q: %w", tableName, err))
	}
	t := s.catalog.lookup(tableName)
	if t == nil {
		s.gate.Exit()
		return errIterator(fmt.Errorf("scan table %q: %w", tableName, storage.ErrTableNotFound))
	}
	lower, upper := tableSpan(t.id)
	if seg.Total > 1 {
		first, last, err := s.bounds(lower, upper)
		if err != nil {
			s.gate.Exit()
			return errIterator(fmt.Errorf("scan table %q: %w", tableName, err))
		}
		if first != nil {
			lo, hi := segmentSpan(first, last, seg.Index, seg.Total)
			if lo != nil {
				lower = lo
			}
			if hi != nil {
				upper = hi
			}
		}
	}
	if seg.After != (storage.Key{}) {
		lower = maxKey(lower, append(appendItemKey(nil, t.id, seg.After.PK, seg.After.SK), 0))
	}
	if bytes.Compare(lower, upper) > 0 {
		lower = upper
	}
	return s.open(&iterator{ctx: ctx, table: tableName, scan: true}, lower, upper)
}

// bounds returns the first and last keys in [lower, upper), nil when
// there are none.
func (s *Store) bounds(lower, upper []byte) (first, last []byte, err error) {
	pi, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, nil, err
	}
	if pi.First() {
		first = bytes.Clone(pi.Key())
	}
	if pi.Last() {
		last = bytes.Clone(pi.Key())
	}
	return first, last, pi.Close()
}

// segmentSpan returns the bounds of segment i of n of the keys from
// first to last: the numbers of 8 bytes after their common prefix are cut
// into n equal ranges. Segment 0 has no lower bound and segment n-1 no
// upper bound (nil), so that together they hold every key.
func segmentSpan(first, last []byte, i, n int) (lo, hi []byte) {
	common := 0
	for common < len(first) && common < len(last) && first[common] == last[common] {
		common++
	}
	word := func(k []byte) uint64 {
		var b [8]byte
		if common < len(k) {
			copy(b[:], k[common:])
		}
		return binary.BigEndian.Uint64(b[:])
	}
	a, z := word(first), word(last)
	cut := func(j int) []byte {
		// a + (z-a)*j/n without overflow.
		hiw, low := bits.Mul64(z-a, uint64(j))
		q, _ := bits.Div64(hiw, low, uint64(n))
		k := append(bytes.Clone(first[:common]), make([]byte, 8)...)
		binary.BigEndian.PutUint64(k[common:], a+q)
		return k
	}
	if i > 0 {
		lo = cut(i)
	}
	if i < n-1 {
		hi = cut(i + 1)
	}
	return lo, hi
}

// open gives it a Pebble iterator over [lower, upper). The operation
// entered by the caller (gate) is exited when it is closed.
func (s *Store) open(it *iterator, lower, upper []byte) *iterator {
	pi, err := s.db.NewIterWithContext(it.ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		s.gate.Exit()
		it.Failure = fmt.Errorf("read table %q: %w", it.table, err)
		it.done = true
		return it
	}
	it.pi = pi
	it.release = s.gate.Exit
	return it
}

// minKey and maxKey return the smaller and the larger key.
func minKey(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

func maxKey(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

// ctxCheckEvery is how many items an iterator reads between two looks at
// its context.
const ctxCheckEvery = 256

// iterator is a Query's or a Scan's storage.Iterator over a Pebble
// iterator. It belongs to one goroutine. Next leaves the current item as
// Pebble holds it (key and val); Item decodes it, and SortKey and Attrs
// read it in place.
type iterator struct {
	ctx   context.Context
	table string
	// tableID is a Query's table's, for its keys (Requery).
	tableID uint64
	pi      *pebble.Iterator // nil when there was nothing to open
	// release ends the store operation the iterator holds open; nil once
	// called.
	release func()

	scan   bool     // items of every partition; pk is read from the key
	pk     string   // a Query's partition
	skFrom int      // a Query's sort keys start at this offset in the key
	desc   bool     // walk backwards
	limit  int      // stop after this many items examined; 0: no limit
	attrs  []string // projection; nil: every attribute
	filter *storage.Filter
	// matched, with a filter and a projection, is the projection and the
	// attributes the filter reads: what an item is decoded with to be
	// matched.
	matched []string
	// bounds holds a Query's lower and upper bounds, which Pebble
	// copies: its memory is the next Requery's.
	bounds, lower, upper []byte

	started bool
	done    bool
	n       int // items examined
	// IteratorEnd holds the error that stopped the iteration, or, when
	// the limit stopped it, the sort key of the last item examined.
	storage.IteratorEnd
	// key and val are the current item's, Pebble's until it moves; item
	// is it decoded, once decoded is set.
	key, val []byte
	decoded  bool
	buf      []byte
	item     storage.Item
	// view boxes the string, number or binary Attrs hands out
	// (attrValue).
	view struct {
		s string
		n json.Number
		b []byte
	}
}

// errIterator returns an iterator that yields nothing and err.
func errIterator(err error) *iterator {
	return &iterator{IteratorEnd: storage.IteratorEnd{Failure: err}, done: true}
}

// Next reads the next item: with a filter, the next one it matches.
func (it *iterator) Next() bool {
	for {
		if it.done {
			return false
		}
		if it.limit > 0 && it.n >= it.limit {
			it.done = true
			it.ResumeAfter = strings.Clone(it.SortKey())
			it.Limited = it.more()
			return false
		}
		if it.n%ctxCheckEvery == 0 {
			if err := it.ctx.Err(); err != nil {
				return it.fail(err)
			}
		}
		if !it.step() {
			return false
		}
		if it.filter == nil {
			return true
		}
		// The filter reads its attributes; the projection follows.
		if err := it.decode(it.matched); err != nil {
			return it.fail(err)
		}
		if it.filter.Match(it.item.Attrs) {
			if len(it.matched) > len(it.attrs) {
				project(it.item.Attrs, it.attrs)
			}
			return true
		}
	}
}

// step moves to the next item of the range and counts it examined.
func (it *iterator) step() bool {
	var ok bool
	switch {
	case !it.started && it.desc:
		ok = it.pi.Last()
	case !it.started:
		ok = it.pi.First()
	case it.desc:
		ok = it.pi.Prev()
	default:
		ok = it.pi.Next()
	}
	it.started = true
	if !ok {
		if err := it.pi.Error(); err != nil {
			return it.fail(err)
		}
		it.done = true
		return false
	}
	val, err := it.pi.ValueAndErr()
	if err != nil {
		return it.fail(err)
	}
	it.key, it.val, it.decoded = it.pi.Key(), val, false
	it.n++
	return true
}

// more reports whether the range holds an item past the current one.
func (it *iterator) more() bool {
	if !it.started || it.pi == nil {
		return it.pi != nil
	}
	if it.desc {
		return it.pi.Prev()
	}
	return it.pi.Next()
}

// project keeps only the attributes named in attrs.
func project(item map[string]any, attrs []string) {
	for k := range item {
		if !slices.Contains(attrs, k) {
			delete(item, k)
		}
	}
}

// keys returns the current item's partition key (a Query's own, "" for
// a scan whose key does not split) and sort key, in Pebble's memory.
func (it *iterator) keys() (pk, sk []byte, ok bool) {
	if it.scan {
		return splitItemKey(it.key)
	}
	return nil, it.key[it.skFrom:], true
}

// decode builds it.item from the current key and value. It copies the
// key's sort key (and, for a scan, partition key) and the value, or only
// the attributes of it that attrs names, into one string, which the
// item's keys, names, strings and numbers then share.
func (it *iterator) decode(attrs []string) error {
	pk, sk, ok := it.keys()
	if !ok {
		return errCorrupt
	}
	pkLen := len(pk)
	it.buf = append(append(it.buf[:0], pk...), sk...)
	kept := 0
	if attrs != nil {
		// The projection reads val in place, and keeps none of it.
		var err error
		if it.buf, kept, err = appendProjection(it.buf, inPlace(it.val), attrs); err != nil {
			return err
		}
	} else {
		it.buf = append(it.buf, it.val...)
	}
	own := string(it.buf)
	d := decoder{s: own[pkLen+len(sk):]}
	var decoded map[string]any
	var err error
	if attrs != nil {
		decoded, err = d.attributes(kept)
	} else {
		decoded, err = d.item()
	}
	if err != nil {
		return err
	}
	it.item = storage.Item{PK: it.pk, SK: own[pkLen : pkLen+len(sk)], Attrs: decoded}
	if it.scan {
		it.item.PK = own[:pkLen]
	}
	it.decoded = true
	return nil
}

// inPlace returns b as a string that shares its memory: valid while b is.
func inPlace(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// fail stops the iteration with err.
func (it *iterator) fail(err error) bool {
	it.Failure = fmt.Errorf("read table %q: %w", it.table, err)
	it.done = true
	return false
}

// Item returns the current item, which it decodes. The caller owns it.
// An item the store cannot decode ends the iteration: Item returns a
// zero Item, and Err the error.
func (it *iterator) Item() storage.Item {
	if !it.decoded && it.Failure == nil && it.key != nil {
		if err := it.decode(it.attrs); err != nil {
			it.fail(err)
			it.item = storage.Item{}
		}
	}
	return it.item
}

// SortKey returns the current item's sort key, in Pebble's memory until
// the iterator moves.
func (it *iterator) SortKey() string {
	if it.decoded {
		return it.item.SK
	}
	_, sk, _ := it.keys()
	return inPlace(sk)
}

// Attrs calls fn with the current item's attributes, of the projection
// when the query has one, decoded from Pebble's memory: names, strings and
// numbers are views of it, valid until the iterator moves, and an
// attribute's string or number is boxed in the iterator (attrValue),
// valid during the call.
func (it *iterator) Attrs(fn func(name string, v any) bool) error {
	if it.decoded {
		for name, v := range it.item.Attrs {
			if !fn(name, v) {
				return nil
			}
		}
		return nil
	}
	d := decoder{s: inPlace(it.val)}
	n, err := d.header()
	if err != nil {
		return fmt.Errorf("read table %q: %w", it.table, err)
	}
	for range n {
		name, err := d.string()
		if err != nil {
			return fmt.Errorf("read table %q: %w", it.table, err)
		}
		if it.attrs != nil && !slices.Contains(it.attrs, name) {
			if err := d.skip(1); err != nil {
				return fmt.Errorf("read table %q: %w", it.table, err)
			}
			continue
		}
		v, err := it.attrValue(&d)
		if err != nil {
			return fmt.Errorf("read table %q: %w", it.table, err)
		}
		if !fn(name, v) {
			return nil
		}
	}
	if d.i != len(d.s) {
		return fmt.Errorf("read table %q: %w", it.table, errCorrupt)
	}
	return nil
}

// attrValue decodes an attribute's value for Attrs. A string or a
// number, an attribute's usual value, comes in an interface that refers
// to it.view rather than to a copy of its string header: boxing a string
// allocates one, and Attrs hands out one value at a time, valid only
// during the call (storage.Iterator), so the next value may take its
// place. A binary value (a chunk) is likewise a view of Pebble's memory,
// not a copy, which its reader must not write. Any other value is
// decoded as value decodes it.
func (it *iterator) attrValue(d *decoder) (any, error) {
	if d.i < len(d.s) {
		switch d.s[d.i] {
		case tagString:
			d.i++
			s, err := d.string()
			it.view.s = s
			return boxedAt(any(""), unsafe.Pointer(&it.view.s)), err
		case tagNumber:
			d.i++
			s, err := d.string()
			it.view.n = json.Number(s)
			return boxedAt(any(json.Number("")), unsafe.Pointer(&it.view.n)), err
		case tagBinary:
			d.i++
			s, err := d.string()
			it.view.b = []byte{} // not nil, as value decodes it
			if len(s) > 0 {
				it.view.b = unsafe.Slice(unsafe.StringData(s), len(s))
			}
			return boxedAt(any([]byte(nil)), unsafe.Pointer(&it.view.b)), err
		}
	}
	return d.value(1)
}

// boxedAt returns v made to refer to the value at p, of v's dynamic
// type, in place of its own copy: an interface of a string type is a
// type word and a pointer to the string header, and boxedAt swaps the
// pointer. The interface then changes when the value at p does.
func boxedAt(v any, p unsafe.Pointer) any {
	(*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] = p
	return v
}

// Close closes the Pebble iterator and lets the store close. It is safe to
// call twice and returns Err.
func (it *iterator) Close() error {
	it.done = true
	if it.pi != nil {
		if err := it.pi.Close(); err != nil && it.Failure == nil {
			it.Failure = fmt.Errorf("read table %q: %w", it.table, err)
		}
		it.pi = nil
	}
	if it.release != nil {
		it.release()
		it.release = nil
	}
	return it.Failure
}
