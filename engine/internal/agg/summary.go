package agg

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// Summary summarises events in a way that merges: a query bucket read from
// raw events, a rollup, or the part of a query bucket read so far. Raw
// aggregates and rollups summarise with it alike and turn it into a Bucket
// with the same method, so they give the same answers to the digit.
type Summary struct {
	// Events counts the events summarised.
	Events int64
	// one summarises the first field the summary met, named oneName, with
	// no map or allocation of its own: most aggregates summarise one
	// field, and an every-series aggregate makes a summary per series and
	// bucket. fields holds the others.
	oneName string
	one     fieldSummary
	hasOne  bool
	fields  map[string]*fieldSummary
	// Want names the sketches its fields keep: none in rollups.
	Want Needs
}

// fieldSummary summarises one field. Keys order events as the merge does: by
// sort key (time, id), then series.
type fieldSummary struct {
	count int64
	// sum, min and max summarise the values while all are numbers.
	sum, min, max apd.Decimal
	// nonnum is set once a value is not a number; notNumber then says
	// which, for errors, when it was read raw rather than from a rollup.
	nonnum    bool
	notNumber *notNumber
	first     any
	last      any
	firstK    OrderKey
	lastK     OrderKey
	// sk holds the sketches the summary needs, once a value came.
	sk *sketches
	// float is the last float AddFloat added, once one was.
	float *lastFloat
	// pend, when pending, is a part of the sum not yet in sum: runs'
	// totals (AddDecimals) added in an int64 while they fit, which
	// flushSum adds to sum before anything reads it.
	pend    pendingSum
	pending bool
}

// pendingSum is m times 10^exp.
type pendingSum struct {
	m   int64
	exp int32
}

// addSum adds m times 10^exp to the sum: to the pending part while
// their sum fits an int64, to the exponent of the finer (as apd's exact
// addition aligns them), else the pending part goes to sum and m starts
// the next. Exact decimal addition is associative, so the sum and its
// exponent (the least of its terms') are those of adding each to sum.
func (fp *fieldSummary) addSum(m int64, exp int32) {
	if fp.pending {
		e := min(fp.pend.exp, exp)
		a, ok1 := scaleSmall(fp.pend.m, fp.pend.exp-e)
		b, ok2 := scaleSmall(m, exp-e)
		if c := a + b; ok1 && ok2 && !((a > 0 && b > 0 && c < 0) || (a < 0 && b < 0 && c >= 0)) {
			fp.pend = pendingSum{c, e}
			return
		}
		fp.flushSum()
	}
	fp.pend, fp.pending = pendingSum{m, exp}, true
}

// addToSum adds x to the sum: to its pending part when x's coefficient
// fits an int64 (addSum), else to sum.
func (fp *fieldSummary) addToSum(x *apd.Decimal) {
	if x.Form == apd.Finite && x.Coeff.IsInt64() {
		m := x.Coeff.Int64()
		if x.Negative {
			m = -m
		}
		fp.addSum(m, x.Exponent)
		return
	}
	fp.flushSum()
	addDecimal(&fp.sum, x)
}

// flushSum adds the pending part of the sum to sum.
func (fp *fieldSummary) flushSum() {
	if !fp.pending {
		return
	}
	var x apd.Decimal
	x.SetFinite(fp.pend.m, fp.pend.exp)
	addDecimal(&fp.sum, &x)
	fp.pend, fp.pending = pendingSum{}, false
}

// OrderKey places an event in the merge's order: by time (Unix
// nanoseconds), id, then series. Time then id is the order of sort keys.
type OrderKey struct {
	At         int64
	ID, Series string
}

func keyOf(ev event.Event) OrderKey { return OrderKey{ev.Time.UnixNano(), ev.ID, ev.Series} }

func (a OrderKey) less(b OrderKey) bool {
	switch {
	case a.At != b.At:
		return a.At < b.At
	case a.ID != b.ID:
		return a.ID < b.ID
	}
	return a.Series < b.Series
}

// owned returns k with an id that shares no memory with a store's
// buffers (the series is the reader's own).
func (a OrderKey) owned() OrderKey {
	a.ID = strings.Clone(a.ID)
	return a
}

// itemenc.SortKey returns the sort key of the event at k.
func (k OrderKey) sortKey() string { return itemenc.SortKey(time.Unix(0, k.At), k.ID) }

// orderKeyOf reads a sort key back into the order key of the event of a
// series.
func orderKeyOf(sk, series string) (OrderKey, bool) {
	t, id, err := itemenc.ParseSortKey(sk)
	return OrderKey{t.UnixNano(), id, series}, err == nil
}

// field returns the summary of a field, made when new: the summary keeps
// name, which must not be a view of a store's buffers.
func (p *Summary) field(name string) *fieldSummary {
	if fp := p.lookup(name); fp != nil {
		return fp
	}
	if !p.hasOne {
		p.oneName, p.hasOne = name, true
		return &p.one
	}
	if p.fields == nil {
		p.fields = map[string]*fieldSummary{}
	}
	fp := &fieldSummary{}
	p.fields[name] = fp
	return fp
}

// lookup returns the summary of a field, or nil when the summary has none.
func (p *Summary) lookup(name string) *fieldSummary {
	if p.hasOne && p.oneName == name {
		return &p.one
	}
	return p.fields[name]
}

// all yields the summary's fields and their summaries.
func (p *Summary) all() iter.Seq2[string, *fieldSummary] {
	return func(yield func(string, *fieldSummary) bool) {
		if p.hasOne && !yield(p.oneName, &p.one) {
			return
		}
		for name, fp := range p.fields {
			if !yield(name, fp) {
				return
			}
		}
	}
}

// Add adds an event, summarising the named fields.
func (p *Summary) Add(ev event.Event, fields []string) {
	p.Events++
	for _, name := range fields {
		if v, ok := ev.Fields[name]; ok {
			p.field(name).add(v, keyOf(ev), p.Want)
		}
	}
}

// AddItem adds the event at k that it is positioned on, summarising
// the named fields, which v visits in place.
func (p *Summary) AddItem(k OrderKey, it storage.Iterator, v *FieldVisitor) error {
	p.Events++
	v.p, v.k = p, k
	return it.Attrs(v.visit)
}

// FieldVisitor adds the values Attrs hands it to a summary: one per read,
// whose visit, a method value made once, serves every item without an
// allocation.
type FieldVisitor struct {
	fields []string
	p      *Summary
	k      OrderKey
	visit  func(name string, v any) bool
}

// NewFieldVisitor returns a visitor that summarises the named fields.
func NewFieldVisitor(fields []string) *FieldVisitor {
	v := &FieldVisitor{fields: fields}
	v.visit = func(name string, val any) bool {
		// The summary keeps the name: the query's own, not the store's.
		if i := slices.Index(v.fields, name); i >= 0 {
			v.p.field(v.fields[i]).add(val, v.k, v.p.Want)
		}
		return true
	}
	return v
}

// AddValue adds the value v of the named field of the event at k, as
// Add adds it from the event: for values read from a column, whose
// event is counted apart (Events). name must not be a view of a store's
// buffers.
func (p *Summary) AddValue(name string, v any, k OrderKey) {
	p.field(name).add(v, k, p.Want)
}

// AddInt adds the integer n, a value of the named field of the event at
// k, as AddValue adds its canonical text, without making the text when
// the summary keeps only totals.
func (p *Summary) AddInt(name string, n int64, k OrderKey) {
	fp := p.field(name)
	if p.Want.sketched() || !p.Want.noOrder {
		fp.add(json.Number(strconv.FormatInt(n, 10)), k, p.Want)
		return
	}
	var x apd.Decimal
	x.SetFinite(n, 0)
	fp.addNumber(&x, p.Want)
}

// AddFloat adds the float f, a value of the named field of the event at
// k whose canonical text is strconv.FormatFloat(f, 'f', -1, 64), as
// AddValue adds that text, without making it when the summary keeps only
// totals and the text is a short plain decimal.
func (p *Summary) AddFloat(name string, f float64, k OrderKey) {
	fp := p.field(name)
	bits := math.Float64bits(f)
	if fp.float != nil && fp.float.bits == bits && !p.Want.sketched() && p.Want.noOrder {
		fp.addNumber(&fp.float.x, p.Want) // the value before again, as a reading often is
		return
	}
	var buf [32]byte
	text := strconv.AppendFloat(buf[:0], f, 'f', -1, 64)
	var x apd.Decimal
	if p.Want.sketched() || !p.Want.noOrder || !parsePlainDecimal(&x, text) {
		fp.add(json.Number(text), k, p.Want)
		return
	}
	if fp.float == nil {
		fp.float = &lastFloat{}
	}
	fp.float.bits = bits
	fp.float.x.Set(&x)
	fp.addNumber(&x, p.Want)
}

// AddDecimal adds the decimal m times 10^-scale, a value of the named
// field of the event at k, as AddValue adds its canonical text (no
// trailing zeros after the point), without making the text when the
// summary keeps only totals.
func (p *Summary) AddDecimal(name string, m int64, scale int, k OrderKey) {
	for scale > 0 && m%10 == 0 {
		m, scale = m/10, scale-1 // the canonical text's coefficient and exponent
	}
	var x apd.Decimal
	x.SetFinite(m, -int32(scale))
	fp := p.field(name)
	if p.Want.sketched() || !p.Want.noOrder {
		fp.add(json.Number(x.Text('f')), k, p.Want)
		return
	}
	fp.addNumber(&x, p.Want)
}

// lastFloat is the last float AddFloat added to a field, and its
// decimal.
type lastFloat struct {
	bits uint64
	x    apd.Decimal
}

// AddAll adds an event, summarising every field it has: a rollup's.
func (p *Summary) AddAll(ev event.Event) {
	p.Events++
	k := keyOf(ev)
	for name, v := range ev.Fields {
		p.field(name).add(v, k, p.Want)
	}
}

// add adds one value of the field, of the event at k, and to the
// sketches w names. What it keeps of v and of k's id it copies: they may
// be views of a store's buffers (AddItem).
func (fp *fieldSummary) add(v any, k OrderKey, w Needs) {
	if !w.noOrder {
		if fp.count == 0 || k.less(fp.firstK) {
			fp.first, fp.firstK = storage.CloneValue(v), k.owned()
		}
		if fp.count == 0 || fp.lastK.less(k) {
			fp.last, fp.lastK = storage.CloneValue(v), k.owned()
		}
	}
	fp.count++
	// Values are read as numbers only for what asks for numbers: totals
	// (until a value is not one), quantiles and counters.
	parse := w.quantiles || w.counter || w.squares || (!fp.nonnum && w.totals())
	var x apd.Decimal
	isNumber := parse && decimalOf(&x, v)
	if w.sketched() {
		if fp.sk == nil {
			fp.sk = &sketches{}
		}
		if isNumber {
			fp.sk.add(w, v, &x, k.Series)
		} else {
			fp.sk.add(w, v, nil, k.Series)
		}
	}
	if fp.nonnum || !parse {
		return
	}
	if !isNumber {
		fp.nonnum, fp.notNumber = true, &notNumber{storage.CloneValue(v), k.At}
		return
	}
	fp.total(&x, w)
}

// addNumber adds one number of the field, to a summary that keeps its
// totals and no sketch nor first and last (AddInt, AddFloat).
func (fp *fieldSummary) addNumber(x *apd.Decimal, w Needs) {
	fp.count++
	if !fp.nonnum && w.totals() {
		fp.total(x, w)
	}
}

// total adds the number x, the count-th value of the field, to its sum,
// min and max, those w keeps.
func (fp *fieldSummary) total(x *apd.Decimal, w Needs) {
	if fp.count == 1 {
		fp.sum.Set(x)
		fp.min.Set(x)
		fp.max.Set(x)
		return
	}
	if !w.noSum {
		fp.addToSum(x)
	}
	if !w.noMinMax {
		if x.Cmp(&fp.min) < 0 {
			fp.min.Set(x)
		}
		if x.Cmp(&fp.max) > 0 {
			fp.max.Set(x)
		}
	}
}

// Merge adds o's summary of the named fields.
func (p *Summary) Merge(o *Summary, fields []string) {
	p.Events += o.Events
	for _, name := range fields {
		of := o.lookup(name)
		if of == nil || of.count == 0 {
			continue
		}
		p.field(name).merge(of)
	}
}

// merge adds o's summary of the same field; o holds at least one value.
func (fp *fieldSummary) merge(o *fieldSummary) {
	fp.flushSum()
	o.flushSum()
	if fp.count == 0 || o.firstK.less(fp.firstK) {
		fp.first, fp.firstK = o.first, o.firstK
	}
	if fp.count == 0 || fp.lastK.less(o.lastK) {
		fp.last, fp.lastK = o.last, o.lastK
	}
	if o.sk != nil {
		if fp.sk == nil {
			fp.sk = &sketches{}
		}
		fp.sk.merge(o.sk)
	}
	first := fp.count == 0
	fp.count += o.count
	switch {
	case fp.nonnum:
	case o.nonnum:
		fp.nonnum, fp.notNumber = true, o.notNumber
	case first:
		fp.sum.Set(&o.sum)
		fp.min.Set(&o.min)
		fp.max.Set(&o.max)
	default:
		addDecimal(&fp.sum, &o.sum)
		if o.min.Cmp(&fp.min) < 0 {
			fp.min.Set(&o.min)
		}
		if o.max.Cmp(&fp.max) > 0 {
			fp.max.Set(&o.max)
		}
	}
}

// Bucket returns b, the empty bucket of a query that starts, aligned, at
// start, with the events p summarises and the results of funcs for each
// of fields: an error when numeric (funcs hold a function of numbers) and
// a field holds something else, which the engine reports as a bad query.
func (p *Summary) Bucket(b Bucket, start time.Time, fields, funcs []string, numeric bool, rank Rank) (Bucket, error) {
	b.Events = p.Events
	for _, name := range fields {
		fp := p.lookup(name)
		if fp == nil || fp.count == 0 {
			continue
		}
		fp.flushSum()
		if numeric && fp.nonnum {
			return Bucket{}, fmt.Errorf("field %q holds a value that is not a number in the bucket starting %s%s: sum, min, max, avg, percentiles, delta and rate need numbers",
				name, start.Format(time.RFC3339Nano), fp.notNumber.String())
		}
		r := make(map[string]any, len(funcs))
		for _, fn := range funcs {
			switch fn {
			case FnCount:
				r[fn] = fp.count
			case FnSum:
				r[fn] = decimalNumber(&fp.sum)
			case FnMin:
				r[fn] = decimalNumber(&fp.min)
			case FnMax:
				r[fn] = decimalNumber(&fp.max)
			case FnAvg:
				r[fn] = averageOf(&fp.sum, fp.count)
			case FnFirst:
				r[fn] = fp.first
			case FnLast:
				r[fn] = fp.last
			case FnStddev:
				if fp.sk != nil && !fp.nonnum {
					if v := fp.sk.stddev(&fp.sum, fp.count); v != nil {
						r[fn] = v
					}
				}
			default:
				if fp.sk != nil {
					if v := fp.sk.result(fn, b.End.Sub(b.Start).Seconds(), rank); v != nil {
						r[fn] = v
					}
				}
			}
		}
		b.Values[name] = r
	}
	return b, nil
}

// notNumber is a value that is not a number, and the time of its event.
type notNumber struct {
	v  any
	at int64
}

// String says what the value is and where it was found, for errors:
// " (a string, in the event at 2017-04-10T12:00:00Z)"; nothing when
// unknown (n is nil).
func (n *notNumber) String() string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf(" (%s, in the event at %s)", kindOf(n.v), time.Unix(0, n.at).UTC().Format(time.RFC3339Nano))
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
