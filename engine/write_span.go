package engine

import (
	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/event"
)

// spans cuts a part's events into the spans a write turns into items
// one at a time (admission.WriteSpanEnd's bounds: at most
// admission.WriteSpanEvents events and admission.WriteSpanBytes of
// fields, one event at least), so that what it builds is bounded
// whatever the size of its request, as admission's estimate of it
// counts. A span is the indexes of its events.
//
// The events of a row- or map-layout part are cut in their order. Those
// of a chunk-layout part are taken series by series (in the order each
// series first appears, each series' events in theirs), and a span ends
// before a series that would not fit in it whole: a request's events of
// one series, and so of one chunk window, go into one span and one
// chunk, unless one series alone passes the bounds. The order is a
// function of the request alone, so a retry cuts it the same way and
// writes the same chunks.
type spans struct {
	events event.Batch
	n      int
	// next is the start of the next span: an index into events, or,
	// with order, into order, the events grouped by series.
	next  int
	order []int32
	buf   []int
}

func newSpans(events event.Batch, bySeries bool) *spans {
	s := &spans{events: events, n: events.Len()}
	if !bySeries || s.n < 2 {
		return s
	}
	// Two passes: each series' count, then each event at its series'
	// next place; the batch numbers its series in the order they first
	// appear. The order takes 4 bytes an event (int32: a request holds
	// far fewer than 2^31 events), within what admission's estimate
	// allows for the write (its figures are deliberately high).
	groups := events.SeriesCount()
	if groups == 1 {
		return s
	}
	next := make([]int32, groups+1)
	for i := range s.n {
		next[events.SeriesIndex(i)+1]++
	}
	for g := 1; g < groups; g++ {
		next[g] += next[g-1]
	}
	s.order = make([]int32, s.n)
	for i := range s.n {
		g := events.SeriesIndex(i)
		s.order[next[g]] = int32(i)
		next[g]++
	}
	return s
}

// index returns the event at position k of the order.
func (s *spans) index(k int) int {
	if s.order == nil {
		return k
	}
	return int(s.order[k])
}

// span returns the indexes of the next span's events, valid until the
// next call, or nil once every event was in one.
func (s *spans) span() []int {
	if s.next >= s.n {
		return nil
	}
	from := s.next
	to := from
	if s.order == nil {
		to = admission.WriteSpanEnd(s.events, from)
	} else {
		bytes := 0
		for to < s.n && to-from < admission.WriteSpanEvents {
			bytes += s.events.FieldsBytes(int(s.order[to]))
			if bytes > admission.WriteSpanBytes && to > from {
				break
			}
			to++
		}
		// End before the series cut short, when the span holds
		// another whole.
		if to < s.n && to > from {
			last := s.events.Series(int(s.order[to-1]))
			if s.events.Series(int(s.order[to])) == last {
				start := to - 1
				for start > from && s.events.Series(int(s.order[start-1])) == last {
					start--
				}
				if start > from {
					to = start
				}
			}
		}
	}
	s.next = to
	s.buf = s.buf[:0]
	for k := from; k < to; k++ {
		s.buf = append(s.buf, s.index(k))
	}
	return s.buf
}

// rest returns base plus the index of every event not yet in a span.
func (s *spans) rest(base int) []int {
	out := make([]int, 0, s.n-s.next)
	for k := s.next; k < s.n; k++ {
		out = append(out, base+s.index(k))
	}
	s.next = s.n
	return out
}

// whole reports whether span is every event of the part.
func (s *spans) whole(span []int) bool { return len(span) == s.n }
