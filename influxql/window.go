package influxql

import (
	"slices"
	"sort"
	"time"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/period"
)

// windows are the buckets of GROUP BY time(interval, offset) tz('zone'),
// cut as InfluxDB 1.x cuts them: the interval aligned to the zone's
// midnight (its UTC offset at the time) plus the offset. Where the
// zone's UTC offset changes by less than the interval (a DST switch
// under GROUP BY time(1d) or time(12h)), the bucket across the change
// is longer or shorter by it: the day of a spring switch in
// Europe/Berlin is 23 hours, from local midnight to local midnight.
// Changes of at least the interval move no bucket: hourly buckets stay
// on the hour across a one-hour switch. Without tz() the zone is UTC,
// and the buckets are those of the engine's Bucket and Offset.
type windows struct {
	interval, offset time.Duration
	loc              *time.Location
}

// zone returns the zone's offset from UTC at ns.
func (w windows) zone(ns int64) int64 {
	_, off := time.Unix(0, ns).In(w.loc).Zone()
	return int64(off) * int64(time.Second)
}

// of returns the bucket that holds t, [start, end), as InfluxDB's
// IteratorOptions.Window does.
func (w windows) of(t time.Time) (start, end time.Time) {
	interval, offset := int64(w.interval), int64(w.offset)
	ns := t.UnixNano() - offset
	zone := w.zone(ns)
	dt := (ns + zone) % interval
	if dt < 0 {
		dt += interval
	}
	s := ns - dt
	// The start may be before a change of the zone's offset that ns
	// is after: the bucket then starts at the zone's midnight before it.
	if o := zone - w.zone(s); o != 0 && abs(o) < interval {
		s += o
	}
	e := ns + interval - dt
	if endZone := w.zone(e); zone != endZone {
		// Time a switch adds (clocks back) belongs to the bucket before
		// it; time it skips (clocks forward) shortens the bucket when the
		// switch is in it.
		if o := zone - endZone; abs(o) < interval {
			if o > 0 {
				e += o
			} else if w.zone(e+o) == endZone {
				e += o
			}
		}
	}
	return time.Unix(0, s+offset).UTC(), time.Unix(0, e+offset).UTC()
}

// starts returns the starts of the buckets from the one holding from to
// the one holding to, each starting where the one before ends; at most
// limit+1 of them.
func (w windows) starts(from, to time.Time, limit int) []time.Time {
	s, e := w.of(from)
	out := []time.Time{s}
	for !e.After(to) && len(out) <= limit {
		out = append(out, e)
		_, next := w.of(e)
		if !next.After(e) {
			break
		}
		e = next
	}
	return out
}

// timeline returns the times of the answer's rows, in the answer's
// order, as InfluxDB's fill makes them: it steps from the bucket of the
// range's first time (of its last when desc) by the interval, moved by a
// change of the zone's offset smaller than the interval, and answers
// each bucket with events (has) at its own start and each step that
// comes before the next such bucket as a bucket to fill. Each row's
// index in starts is in slots, -1 for a row to fill.
func (w windows) timeline(starts []time.Time, has []bool, from, to time.Time, desc bool) (times []time.Time, slots []int) {
	interval := int64(w.interval)
	begin, end := w.of(from)
	if desc {
		begin, end = w.of(to)
		end, _ = w.of(from)
	} else {
		end, _ = w.of(to)
	}
	cur := begin.UnixNano()
	zone := w.zone(cur)
	step := func() {
		if desc {
			cur -= interval
		} else {
			cur += interval
		}
		if z := w.zone(cur - 1); z != zone {
			if diff := zone - z; abs(diff) < interval {
				cur += diff
			}
			zone = z
		}
	}
	before := func(a, b int64) bool { return a < b != desc && a != b } // a comes before b
	emit := func(ns int64, slot int) {
		times, slots = append(times, time.Unix(0, ns).UTC()), append(slots, slot)
		step()
	}
	for k := range starts {
		i := k
		if desc {
			i = len(starts) - 1 - k
		}
		if !has[i] {
			continue
		}
		at := starts[i].UnixNano()
		for before(cur, at) {
			emit(cur, -1)
		}
		emit(at, i)
	}
	for !before(end.UnixNano(), cur) {
		emit(cur, -1)
	}
	return times, slots
}

// rows puts the values and events of the buckets starting at starts
// on the answer's timeline, in time order: the buckets with events, and
// empty ones where InfluxDB's fill steps.
func (w windows) rows(starts []time.Time, values [][]any, events []int64, from, to time.Time, desc bool) ([]time.Time, [][]any, []int64) {
	has := make([]bool, len(starts))
	for i, n := range events {
		has[i] = n > 0
	}
	times, slots := w.timeline(starts, has, from, to, desc)
	outValues, outEvents := make([][]any, len(slots)), make([]int64, len(slots))
	for k, i := range slots {
		if i < 0 {
			outValues[k] = make([]any, len(values[0]))
			continue
		}
		outValues[k], outEvents[k] = values[i], events[i]
	}
	if desc {
		slices.Reverse(times)
		slices.Reverse(outValues)
		slices.Reverse(outEvents)
	}
	return times, outValues, outEvents
}

// piece is one engine aggregate of a run of buckets: a range of them
// whose buckets the engine cuts alike, as one length and offset from
// UTC midnight, or one bucket of another length, asked for as a
// calendar week that holds it and cut to its range.
type piece struct {
	first, last int // the buckets, by index in starts
	from, to    time.Time
	bucket      time.Duration // 0: a calendar week
	offset      time.Duration
	calendar    period.Granularity
}

// pieces cuts the buckets starting at starts, within [from, to] (both
// inclusive), into the engine aggregates that compute them.
func (w windows) pieces(starts []time.Time, from, to time.Time) []piece {
	var out []piece
	interval := int64(w.interval)
	for i := 0; i < len(starts); {
		s := starts[i]
		end := w.end(starts, i)
		p := piece{first: i, last: i, from: later(s, from), to: earlier(end.Add(-time.Nanosecond), to)}
		if end.Sub(s) != w.interval {
			// One bucket of its own length, at most a day and a change
			// of the zone's offset: within the week from its UTC day.
			p.calendar = period.Granularity{Unit: period.Week, WeekStart: s.Weekday()}
			out = append(out, p)
			i++
			continue
		}
		phase := s.UnixNano() % interval
		if phase < 0 {
			phase += interval
		}
		p.bucket, p.offset = w.interval, time.Duration(phase)
		for j := i + 1; j < len(starts); j++ {
			next := w.end(starts, j)
			if next.Sub(starts[j]) != w.interval || !starts[j].Equal(end) {
				break
			}
			p.last, end = j, next
		}
		p.to = earlier(end.Add(-time.Nanosecond), to)
		out = append(out, p)
		i = p.last + 1
	}
	return out
}

// inclusiveEnds makes each piece's range hold its end: the engine ends
// a range before a To that starts one of its buckets (AggregateQuery's
// From and To), where InfluxQL's time <= t holds the events at t. A
// piece that ends at the start of one of its buckets is cut there into
// the buckets before and the instant t alone, a piece of its own.
func inclusiveEnds(pieces []piece) []piece {
	for i := 0; i < len(pieces); i++ {
		p := pieces[i]
		if p.bucket == 0 || !p.to.After(p.from) || (p.to.UnixNano()-int64(p.offset))%int64(p.bucket) != 0 {
			continue
		}
		// The instant t starts the piece's last bucket.
		last := p
		last.from, last.first = p.to, p.last
		p.to = p.to.Add(-time.Nanosecond)
		if p.last > p.first {
			p.last--
		}
		pieces[i] = p
		pieces = slices.Insert(pieces, i+1, last)
		i++
	}
	return pieces
}

// end returns the end of bucket i: the start of the next, or for the
// last, the end of the bucket InfluxDB puts its start in.
func (w windows) end(starts []time.Time, i int) time.Time {
	if i+1 < len(starts) {
		return starts[i+1]
	}
	_, e := w.of(starts[i])
	return e
}

// query sets the piece's range and buckets on an engine aggregate.
func (p piece) query(q engine.AggregateQuery) engine.AggregateQuery {
	q.From, q.To, q.Bucket, q.Offset, q.Calendar = p.from, p.to, p.bucket, p.offset, p.calendar
	return q
}

// slot returns the index in starts of the bucket an engine bucket of the
// piece starting at t (cut to the piece's range) is part of.
func (p piece) slot(starts []time.Time, t time.Time) int {
	i := sort.Search(p.last-p.first+1, func(k int) bool { return starts[p.first+k].After(t) })
	return p.first + i - 1
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
