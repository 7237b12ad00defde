package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// exactSummary is what a bucket should say of one field, computed with
// math/big, apart from the engine's decimals.
type exactSummary struct {
	events, n     int64
	sum, min, max *big.Rat
}

func (s *exactSummary) add(t *testing.T, e event.Event, field string) {
	t.Helper()
	s.events++
	v, ok := e.Fields[field]
	if !ok {
		return
	}
	x := ratOf(t, v)
	s.n++
	if s.sum == nil {
		s.sum, s.min, s.max = new(big.Rat).Set(x), x, x
		return
	}
	s.sum.Add(s.sum, x)
	if x.Cmp(s.min) < 0 {
		s.min = x
	}
	if x.Cmp(s.max) > 0 {
		s.max = x
	}
}

// require checks b against s: the events, and each function of the field
// that b holds.
func (s *exactSummary) require(t *testing.T, b engine.Bucket, field string) {
	t.Helper()
	require.Equal(t, s.events, b.Events, "bucket %s", b.Start)
	if s.n == 0 {
		require.Empty(t, b.Values, "bucket %s", b.Start)
		return
	}
	v := b.Values[field]
	require.NotEmpty(t, v, "bucket %s", b.Start)
	for fn, got := range v {
		switch fn {
		case engine.FnCount:
			require.Equal(t, s.n, got, "bucket %s", b.Start)
		case engine.FnSum:
			require.Equal(t, decimalText(s.sum), got, "sum of bucket %s", b.Start)
		case engine.FnMin:
			require.Equal(t, decimalText(s.min), got, "min of bucket %s", b.Start)
		case engine.FnMax:
			require.Equal(t, decimalText(s.max), got, "max of bucket %s", b.Start)
		case engine.FnAvg:
			requireAverage(t, new(big.Rat).Quo(s.sum, big.NewRat(s.n, 1)), got)
		}
	}
}

// ratOf reads a result or a field value, a json.Number, exactly.
func ratOf(t *testing.T, v any) *big.Rat {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%v is a %T, not a json.Number", v, v)
	r, ok := new(big.Rat).SetString(string(n))
	require.True(t, ok, "%q is not a decimal", n)
	return r
}

// decimalText writes r, a decimal fraction, as event numbers are written:
// plain notation, no trailing zeros, exactly.
func decimalText(r *big.Rat) json.Number {
	twos, fives := 0, 0
	d := new(big.Int).Set(r.Denom())
	for _, f := range []struct {
		p int64
		n *int
	}{{2, &twos}, {5, &fives}} {
		m := new(big.Int)
		for {
			q, rem := new(big.Int).QuoRem(d, big.NewInt(f.p), m)
			if rem.Sign() != 0 {
				break
			}
			d, *f.n = q, *f.n+1
		}
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		panic(fmt.Sprintf("%s is not a decimal fraction", r))
	}
	return json.Number(r.FloatString(max(twos, fives)))
}

// requireAverage checks that got is want rounded to engine.AvgDigits
// significant digits: no more digits, and no further from want than half
// a unit of the last.
func requireAverage(t *testing.T, want *big.Rat, got any) {
	t.Helper()
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(string(got.(json.Number))), "0")
	require.LessOrEqual(t, len(strings.TrimRight(digits, "0")), engine.AvgDigits, "avg %s", got)
	diff := new(big.Rat).Sub(ratOf(t, got), want)
	bound := new(big.Rat).Mul(new(big.Rat).Abs(want), new(big.Rat).SetFrac(big.NewInt(5), new(big.Int).Exp(big.NewInt(10), big.NewInt(engine.AvgDigits), nil)))
	require.LessOrEqual(t, diff.Abs(diff).Cmp(bound), 0, "avg %s of %s", got, want.FloatString(60))
}

// randomDecimal returns a value of the kinds that float64 sums get wrong:
// tenths, thousandths, 38-digit numbers and tiny ones, either sign.
func randomDecimal(rng *rand.Rand) json.Number {
	var s string
	switch rng.IntN(6) {
	case 0:
		s = "0.1"
	case 1:
		s = "1.001"
	case 2:
		s = fmt.Sprintf("%d.%03d", rng.IntN(1000), rng.IntN(1000))
	case 3:
		s = fmt.Sprintf("%de-30", 1+rng.IntN(99999))
	case 4:
		s = fmt.Sprintf("%d%030d", 1+rng.IntN(9999999), rng.Uint64())
	default:
		s = fmt.Sprintf("%d.%d", rng.IntN(100), rng.IntN(100000))
	}
	if rng.IntN(4) == 0 {
		s = "-" + s
	}
	return json.Number(s) // Write makes it canonical
}

// Sums are exact decimals, from raw events and from rollups alike, and
// equal to the sum computed apart with math/big: to the digit, even past
// the 38 digits of a DynamoDB number.
func TestAggregateSumsAreExactDecimals(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := openRollups(t, b, rollupStart)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(13, 13))
		var all []event.Event
		for day := range 3 {
			dayStart := rollupStart.Add(time.Duration(day) * 24 * time.Hour)
			f.clock.Set(dayStart.Add(23 * time.Hour))
			var batch []event.Event
			for range 300 {
				at := dayStart.Add(time.Duration(rng.IntN(24*3600)) * time.Second).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
				fields := map[string]any{"v": randomDecimal(rng)}
				if rng.IntN(8) == 0 {
					delete(fields, "v")
				}
				batch = append(batch, ev(at, fmt.Sprint("car-", rng.IntN(3)), fields))
			}
			_, err := f.db.Write(ctx, "acme", "t", batch)
			require.NoError(t, err)
			all = append(all, batch...)
		}
		f.clock.Set(rollupStart.Add(4 * 24 * time.Hour))

		type bucketing struct {
			name     string
			bucket   time.Duration
			calendar period.Granularity
		}
		for _, bk := range []bucketing{
			{"1h", time.Hour, period.Granularity{}},
			{"1d", 24 * time.Hour, period.Granularity{}},
			{"1w", 0, period.Granularity{Unit: period.Week}},
			{"1mo", 0, period.Granularity{Unit: period.CalendarMonth}},
		} {
			for _, r := range []struct{ from, to time.Time }{
				{rollupStart, rollupStart.Add(3*24*time.Hour - time.Nanosecond)},
				{rollupStart.Add(90 * time.Minute), rollupStart.Add(2*24*time.Hour + 30*time.Minute)},
			} {
				q := engine.AggregateQuery{
					Table: "t", From: r.from, To: r.to, Bucket: bk.bucket, Calendar: bk.calendar,
					Fields: []string{"v"}, Funcs: []string{"count", "sum", "min", "max", "avg"},
				}
				start := func(at time.Time) time.Time {
					if bk.bucket != 0 {
						return at.Truncate(bk.bucket)
					}
					return bk.calendar.Of(at).Start
				}
				want := map[time.Time]*exactSummary{}
				for _, e := range all {
					if e.Time.Before(r.from) || e.Time.After(r.to) {
						continue
					}
					k := start(e.Time)
					if want[k] == nil {
						want[k] = &exactSummary{}
					}
					want[k].add(t, e, "v")
				}
				raw, err := f.raw.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				require.Len(t, raw, len(want), "%s from %s", bk.name, r.from)
				for _, got := range raw {
					k := start(got.Start)
					require.NotNil(t, want[k], "unexpected bucket %s", got.Start)
					want[k].require(t, got, "v")
				}
				for range 2 { // computed, then read from the stored rollups
					got, err := f.db.Aggregate(ctx, "acme", q)
					require.NoError(t, err)
					require.Equal(t, raw, got, "%s from %s", bk.name, r.from)
				}
			}
		}
		require.NotEmpty(t, rollupItems(t, f))
	})
}

// Known answers: ten tenths make one, a sum keeps digits past DynamoDB's
// 38, and an average rounds half to even at the 38th digit.
func TestAggregateKnownDecimals(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := openRollups(t, b, rollupStart)
		ctx := context.Background()
		hour := rollupStart.Add(5 * time.Hour)
		var evs []event.Event
		for i := range 10 {
			evs = append(evs, ev(hour.Add(time.Duration(i)*time.Minute), "tenths", map[string]any{"v": json.Number("0.1")}))
		}
		evs = append(evs,
			ev(hour, "long", map[string]any{"v": json.Number("1")}),
			ev(hour.Add(time.Minute), "long", map[string]any{"v": json.Number("0." + strings.Repeat("0", 37) + "1")}), // 1e-38
			ev(hour, "thirds", map[string]any{"v": json.Number("1")}),
			ev(hour.Add(time.Minute), "thirds", map[string]any{"v": json.Number("1")}),
			ev(hour.Add(2*time.Minute), "thirds", map[string]any{"v": json.Number("2")}),
		)
		_, err := f.db.Write(ctx, "acme", "t", evs)
		require.NoError(t, err)
		f.clock.Advance(time.Hour)
		for _, tc := range []struct {
			series, sum, avg string
		}{
			{"tenths", "1", "0.1"},
			// 39 digits; the average's 39th is a 5 after a 0, so it stays 0.5.
			{"long", "1." + strings.Repeat("0", 37) + "1", "0.5"},
			{"thirds", "4", "1." + strings.Repeat("3", 37)},
		} {
			q := engine.AggregateQuery{Table: "t", Series: tc.series, From: hour, To: hour.Add(time.Hour - 1), Bucket: time.Hour, Fields: []string{"v"}, Funcs: []string{"sum", "avg"}}
			for _, db := range []*engine.DB{f.raw, f.db, f.db} { // raw, then computed and stored, then from the rollup
				got, err := db.Aggregate(ctx, "acme", q)
				require.NoError(t, err)
				require.Len(t, got, 1)
				require.Equal(t, map[string]any{"sum": json.Number(tc.sum), "avg": json.Number(tc.avg)}, got[0].Values["v"], tc.series)
			}
		}
		require.NotEmpty(t, rollupItems(t, f))
	})
}

// Rollups of the format before exact sums (no "v") are stale: they are
// computed again, and the answer is exact, however they read.
func TestRollupsOfAnEarlierFormatAreRecomputed(t *testing.T) {
	f := openRollups(t, backends.Pebble(), rollupStart)
	ctx := context.Background()
	writeRandom(t, f, 17)
	q := speedQuery
	q.From, q.To, q.Bucket = rollupStart, rollupStart.Add(3*24*time.Hour-time.Nanosecond), time.Hour
	want, err := f.raw.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	_, err = f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	stored := rollupItems(t, f)
	require.NotEmpty(t, stored)
	for k, item := range stored {
		require.Equal(t, json.Number("2"), item.Attrs["v"])
		delete(item.Attrs, "v")
		for _, fv := range item.Attrs["fields"].(map[string]any) {
			if m := fv.(map[string]any); m["sum"] != nil {
				m["sum"] = "1000000"
			}
		}
		table, _, _ := strings.Cut(k, " ")
		require.NoError(t, f.store.BatchWrite(ctx, table, []storage.Item{item}))
	}
	got, err := f.db.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.Equal(t, want, got)
	for _, item := range rollupItems(t, f) {
		require.Equal(t, json.Number("2"), item.Attrs["v"], "written again")
	}
}
