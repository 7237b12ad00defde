package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine/chunk"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// A chunk window is decoded lazily. A window's items are fetched
// together (source.fillWindow), but only their spans are read at first
// (chunk.SpanReader: a chunk's first time is its key's, its last its times
// column's, read without its other columns): an item whose span misses
// the query's range, or lies wholly behind its cursor, is never decoded.
// The rest are decoded one at a time, in the order their events could
// come in the merge (ascending by first time; descending by last time,
// latest first), and an event is returned only once no item left to
// decode could hold an event at its time or before it: ascending, an
// event strictly before the first time of every item not decoded yet;
// descending, strictly after the last time of every one. So every copy
// of an event stored twice (chunk.WindowEvents' repeats) is decoded
// before either is returned, the copy kept is the one of the item read
// first, as the whole window's decoding keeps it, and the events come in
// the merge's order (time, then id): a read returns the events the whole
// window's decoding returns, in the same order (TestLazyWindowReads). A
// read of a series' latest events so decodes the chunks that hold them,
// whatever the window's other chunks, and a page of a read resumed from a
// cursor decodes only the chunks from the cursor on.

// lazyWindow is a chunk window being read: the items still to decode,
// and the events decoded and not yet returned.
type lazyWindow struct {
	desc bool
	// pk is the partition's key, of the items read as their sort keys
	// and chunks.
	pk string
	// items are the window's items that may hold events of the read,
	// in the order they are decoded; next is the first not decoded yet.
	items []spanItem
	next  int
	// read counts the items added, those left out too.
	read int
	// held are the events decoded and not returned, in ascending merge
	// order, each once.
	held []heldEvent
	// evs and dec are decoding's memory, reused item to item.
	evs []event.Event
	dec []itemenc.DecodedEvent
}

// spanItem is an item of a window with its span.
type spanItem struct {
	// item is the item, or its sort key alone when data is its chunk.
	item storage.Item
	data []byte
	span chunk.Span
	// read is the item's place among the window's items in the order
	// they were read: of two copies of an event the first read is kept.
	read int
}

// heldEvent is a decoded event and the place of its item in read order.
type heldEvent struct {
	d    itemenc.DecodedEvent
	read int
}

// reset returns w, a window read to its end or nil, made ready to read
// a window of partition pk in the query's order (desc): add takes its
// items as read, order orders them to decode.
func (w *lazyWindow) reset(pk string, desc bool) *lazyWindow {
	if w == nil {
		w = &lazyWindow{}
	}
	w.desc, w.pk, w.next, w.read, w.items, w.held = desc, pk, 0, 0, w.items[:0], w.held[:0]
	return w
}

// add takes the window's next item as read, if its span may hold an
// event of the selection; its span is read here unless the source read
// it (source.readChunk).
func (w *lazyWindow) add(e sourceItem, win *selection, spans *chunk.SpanReader) error {
	read := w.read
	w.read++
	if e.left {
		return nil // its span missed the selection (source.readChunk)
	}
	it, sp, ok := e.item, e.span, e.spanned
	if !ok {
		var err error
		if sp, ok, err = spans.Span(it); err != nil {
			return fmt.Errorf("chunk %q %q: %w", it.PK, it.SK, err)
		}
	}
	if ok && win.mayHold(sp) {
		w.items = append(w.items, spanItem{item: it, data: e.data, span: sp, read: read})
	}
	return nil
}

// order puts the items added in the order to decode them.
func (w *lazyWindow) order() {
	if w.desc {
		slices.SortStableFunc(w.items, func(a, b spanItem) int { return cmp.Compare(b.span.Last, a.span.Last) })
	} else {
		slices.SortStableFunc(w.items, func(a, b spanItem) int { return cmp.Compare(a.span.First, b.span.First) })
	}
}

// mayHold reports whether an item of span sp may hold an event of the
// selection: one in its range, and not behind its cursor.
func (w *selection) mayHold(sp chunk.Span) bool {
	first, last := time.Unix(0, sp.First), time.Unix(0, sp.Last)
	if last.Before(w.from) || first.After(w.to) {
		return false
	}
	if w.pos == nil {
		return true
	}
	if w.desc {
		return !first.After(w.pos.time)
	}
	return !last.Before(w.pos.time)
}

// done reports whether every event of the window has been returned.
func (w *lazyWindow) done() bool { return w.next == len(w.items) && len(w.held) == 0 }

// take appends to dst, in the query's order, the held events that no
// item left to decode could precede, decoding items until there is at
// least one or the window is read. Row items' fields are the events'.
func (w *lazyWindow) take(dst []itemenc.DecodedEvent, scheme event.IDScheme) ([]itemenc.DecodedEvent, error) {
	for {
		if n := w.ready(); n > 0 {
			if w.desc {
				for i := len(w.held) - 1; i >= len(w.held)-n; i-- {
					dst = append(dst, w.held[i].d)
				}
				clear(w.held[len(w.held)-n:])
				w.held = w.held[:len(w.held)-n]
			} else {
				for _, h := range w.held[:n] {
					dst = append(dst, h.d)
				}
				rest := copy(w.held, w.held[n:])
				clear(w.held[rest:])
				w.held = w.held[:rest]
			}
			return dst, nil
		}
		if w.next == len(w.items) {
			return dst, nil
		}
		if err := w.decode(scheme); err != nil {
			return dst, err
		}
	}
}

// ready returns how many held events, from the front of the query's
// order, no item left to decode could precede or tie with.
func (w *lazyWindow) ready() int {
	if w.next == len(w.items) {
		return len(w.held)
	}
	sp := w.items[w.next].span
	if w.desc {
		// held ascends: count from the back the events after Last.
		i := len(w.held)
		for i > 0 && w.held[i-1].d.Event.Time.UnixNano() > sp.Last {
			i--
		}
		return len(w.held) - i
	}
	i := 0
	for i < len(w.held) && w.held[i].d.Event.Time.UnixNano() < sp.First {
		i++
	}
	return i
}

// decode decodes the next item into held, which stays in merge order
// with each event once: of two copies (one sort key: the same time and
// id), the one of the item read first.
func (w *lazyWindow) decode(scheme event.IDScheme) error {
	it := w.items[w.next]
	w.items[w.next] = spanItem{} // the events own its fields now
	w.next++
	if it.data != nil {
		it.item = storage.Item{PK: w.pk, SK: it.item.SK, Attrs: map[string]any{chunk.AttrData: it.data}}
	}
	var err error
	if w.dec, err = chunk.ItemDecoded(w.dec[:0], it.item, scheme, &w.evs); err != nil {
		return err
	}
	for _, d := range w.dec {
		w.held = append(w.held, heldEvent{d: d, read: it.read})
	}
	clear(w.dec)
	slices.SortStableFunc(w.held, func(a, b heldEvent) int {
		if c := strings.Compare(a.d.SK, b.d.SK); c != 0 {
			return c
		}
		return cmp.Compare(a.read, b.read)
	})
	w.held = slices.CompactFunc(w.held, func(a, b heldEvent) bool { return a.d.SK == b.d.SK })
	return nil
}
