package engine

import (
	"container/heap"
	"strings"
	"time"
)

// merger merges sources in time order. It implements heap.Interface.
type merger struct {
	desc    bool
	sources []*source
	heap    []*source
	// waiting are the sources of a lazy merge (DB.startLazily) not opened
	// yet, in the order their periods come in the merge (compareBounds),
	// and parallelism how many it opens at once. ahead is how many tables
	// it opens the next time it has no event to take (openDue).
	waiting     []*source
	parallelism int
	ahead       int
	// release gives back the query budget the merge holds; nil once
	// called.
	release func()
	// lastAt, lastSK and lastSeries name the event next took last, if
	// emitted.
	lastAt             time.Time
	lastSK, lastSeries string
	emitted            bool
}

func (m *merger) Len() int      { return len(m.heap) }
func (m *merger) Swap(i, j int) { m.heap[i], m.heap[j] = m.heap[j], m.heap[i] }
func (m *merger) Less(i, j int) bool {
	c := compareSources(m.heap[i], m.heap[j])
	if m.desc {
		return c > 0
	}
	return c < 0
}
func (m *merger) Push(x any) { m.heap = append(m.heap, x.(*source)) }
func (m *merger) Pop() any {
	s := m.heap[len(m.heap)-1]
	m.heap = m.heap[:len(m.heap)-1]
	return s
}

// compareSources orders sources by their current events' time, id and
// series. Sort keys order by time and then id, so comparing them does;
// the times, compared first, decide most comparisons at less cost than
// the keys' long common prefixes.
func compareSources(a, b *source) int {
	if c := a.cur.Time.Compare(b.cur.Time); c != 0 {
		return c
	}
	if c := strings.Compare(a.sk, b.sk); c != 0 {
		return c
	}
	return strings.Compare(a.series, b.series)
}

// bound is the time of the first event a source's period could hold in
// the merge's order: its start for an ascending merge; for a descending
// one its end, which bounds its events from above.
func (m *merger) bound(s *source) time.Time {
	if m.desc {
		return s.period.End
	}
	return s.period.Start
}

// compareBounds orders waiting sources by their bounds, in the merge's
// order.
func (m *merger) compareBounds(a, b *source) int {
	c := m.bound(a).Compare(m.bound(b))
	if m.desc {
		return -c
	}
	return c
}

// due reports whether a waiting source could hold an event that comes
// before the current event of the merge, or ties with it: its period ends
// after that event's time (descending), or starts at or before it
// (ascending). A tie opens it, so that the same event stored in two
// tables is found twice in a row, as next needs to skip it.
// The heap must not be empty.
func (m *merger) due(s *source) bool {
	at := m.heap[0].cur.Time
	if m.desc {
		return s.period.End.After(at)
	}
	return !s.period.Start.After(at)
}

// openDue opens the waiting sources that are due, in parallel, and puts
// those with events on the heap. When the heap is empty it opens the next
// tables' sources (every waiting source of the first bounds): one table
// the first time, twice as many each time after, up to parallelism, so
// that a sparse series over many tables is not read one round trip per
// table, until one has an event or none waits.
func (m *merger) openDue() error {
	for len(m.waiting) > 0 {
		n := 0
		if len(m.heap) == 0 {
			n = m.firstTables(max(1, m.ahead))
			m.ahead = min(2*max(1, m.ahead), max(1, m.parallelism))
		} else {
			for n < len(m.waiting) && m.due(m.waiting[n]) {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		opened := m.waiting[:n]
		m.waiting = m.waiting[n:]
		if err := firsts(m.parallelism, opened, (*source).advance); err != nil {
			return err
		}
		for _, s := range opened {
			if s.ok {
				heap.Push(m, s)
			}
		}
	}
	return nil
}

// firstTables returns how many waiting sources the first k bounds (the
// next k tables, or sets of tables of the same period) hold.
func (m *merger) firstTables(k int) int {
	n := 0
	for n < len(m.waiting) {
		if n > 0 && m.compareBounds(m.waiting[n], m.waiting[n-1]) != 0 {
			if k--; k == 0 {
				break
			}
		}
		n++
	}
	return n
}

// next takes the next event off the merge: it calls emit with the source
// whose current event it is, then moves that source on. It takes each
// event once: the same event found in two tables (a retry across a month
// boundary stored it twice) is skipped. It reports false at the end.
func (m *merger) next(emit func(*source) error) (bool, error) {
	for {
		if err := m.openDue(); err != nil {
			return false, err
		}
		if len(m.heap) == 0 {
			return false, nil
		}
		s := m.heap[0]
		dup := m.repeats(s)
		m.lastAt, m.lastSK, m.lastSeries, m.emitted = s.cur.Time, s.sk, s.series, true
		if !dup {
			if err := emit(s); err != nil {
				return false, err
			}
		}
		if err := s.advance(); err != nil {
			return false, err
		}
		if s.ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
		if !dup {
			return true, nil
		}
	}
}

// repeats reports whether the current event of s is the one next took
// last. The times, compared first, tell most events apart at less cost
// than their sort keys.
func (m *merger) repeats(s *source) bool {
	return m.emitted && s.cur.Time.Equal(m.lastAt) && s.sk == m.lastSK && s.series == m.lastSeries
}

// more reports whether an event other than the last one returned remains.
// It drops repeats of the last event off the merge to find out.
func (m *merger) more() (bool, error) {
	for {
		if err := m.openDue(); err != nil {
			return false, err
		}
		if len(m.heap) == 0 {
			return false, nil
		}
		s := m.heap[0]
		if !m.repeats(s) {
			return true, nil
		}
		if err := s.advance(); err != nil {
			return false, err
		}
		if s.ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
}

// page takes up to limit events off the merge, calling emit with the
// source of each (next), and returns how many it took and, when more
// remain, the cursor after the last.
func (m *merger) page(limit int, emit func(*source) error, cursor func(position) string) (int, string, error) {
	var last position
	n := 0
	for n < limit {
		ok, err := m.next(func(s *source) error {
			last = position{time: s.cur.Time, id: s.cur.ID, series: s.series}
			return emit(s)
		})
		if err != nil {
			return 0, "", err
		}
		if !ok {
			return n, "", nil
		}
		n++
	}
	more, err := m.more()
	if err != nil || !more {
		return n, "", err
	}
	return n, cursor(last), nil
}

// close lets every source's iterator go and gives back the query budget.
// It is safe to call twice.
func (m *merger) close() {
	for _, s := range m.sources {
		s.close()
	}
	if m.release != nil {
		m.release()
		m.release = nil
	}
}
