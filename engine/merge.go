package engine

import (
	"container/heap"
	"strings"

	"github.com/timetabledb/timetable/event"
)

// merger merges sources in time order. It implements heap.Interface.
type merger struct {
	desc    bool
	sources []*source
	heap    []*source
	// release gives back the query budget the merge holds; nil once
	// called.
	release func()
	// lastSK and lastSeries name the event next returned last, if
	// emitted.
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
// series. Sort keys order by time and then id, so comparing them does.
func compareSources(a, b *source) int {
	if c := strings.Compare(a.sk, b.sk); c != 0 {
		return c
	}
	return strings.Compare(a.series, b.series)
}

// next returns the next event of the merge, each event once: the same
// event found in two tables (a retry across a month boundary stored it
// twice) is skipped. It reports false at the end.
func (m *merger) next() (event.Event, bool, error) {
	for len(m.heap) > 0 {
		s := m.heap[0]
		ev, dup := s.cur, m.emitted && s.sk == m.lastSK && s.series == m.lastSeries
		m.lastSK, m.lastSeries, m.emitted = s.sk, s.series, true
		if err := s.advance(); err != nil {
			return event.Event{}, false, err
		}
		if s.ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
		if !dup {
			return ev, true, nil
		}
	}
	return event.Event{}, false, nil
}

// more reports whether an event other than the last one returned remains.
// It drops repeats of the last event off the merge to find out.
func (m *merger) more() (bool, error) {
	for len(m.heap) > 0 {
		s := m.heap[0]
		if !(m.emitted && s.sk == m.lastSK && s.series == m.lastSeries) {
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
	return false, nil
}

// page takes up to limit events off the merge, and makes the cursor when
// more remain.
func (m *merger) page(limit int, cursor func(position) string) (Page, error) {
	var p Page
	for len(p.Events) < limit {
		ev, ok, err := m.next()
		if err != nil {
			return Page{}, err
		}
		if !ok {
			return p, nil
		}
		p.Events = append(p.Events, ev)
	}
	more, err := m.more()
	if err != nil {
		return Page{}, err
	}
	if more {
		last := p.Events[len(p.Events)-1]
		p.NextCursor = cursor(position{time: last.Time, id: last.ID, series: last.Series})
	}
	return p, nil
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
