package chunk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// genEvents returns n events of random shapes: times clustered so that
// many share an instant, fields that come and go over a small pool of
// names, every value type, client ids now and then, and repeats of
// earlier events. Some may be invalid (valid filters them).
func genEvents(r *rand.Rand, n int) []event.Event {
	var evs []event.Event
	base := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC).UnixNano()
	tm := base
	for i := 0; i < n; i++ {
		if len(evs) > 0 && r.IntN(10) == 0 {
			evs = append(evs, evs[r.IntN(len(evs))]) // a repeat
			continue
		}
		switch r.IntN(4) {
		case 0: // the same instant
		case 1:
			tm += int64(r.IntN(1000)) * int64(time.Millisecond)
		case 2:
			tm += int64(r.IntN(1 << 20))
		default:
			tm += int64(r.IntN(100)) * int64(time.Second)
		}
		ev := event.Event{Time: time.Unix(0, tm).UTC()}
		if r.IntN(8) == 0 {
			ev.ID = fmt.Sprintf("id-%d\x01", r.IntN(50))[:5] + genString(r)
		}
		nf := r.IntN(6)
		if nf > 0 {
			ev.Fields = map[string]any{}
		}
		for range nf {
			ev.Fields[fmt.Sprintf("f%d", r.IntN(12))] = genValue(r, 1)
		}
		evs = append(evs, ev)
	}
	return evs
}

var runes = []rune{'a', 'b', 'Z', '0', 0, '\n', '"', '\\', '#', 'é', '😀', '中'}

func genString(r *rand.Rand) string {
	rs := make([]rune, r.IntN(8))
	for i := range rs {
		rs[i] = runes[r.IntN(len(runes))]
	}
	return string(rs)
}

func genNumber(r *rand.Rand) string {
	switch r.IntN(7) {
	case 0:
		return strconv.Itoa(r.IntN(2000) - 1000)
	case 1:
		return strconv.FormatInt(r.Int64()-math.MaxInt64/2*int64(r.IntN(3)), 10)
	case 2:
		return strconv.FormatFloat(r.Float64()*1000-500, 'f', -1, 64)
	case 3:
		return fmt.Sprintf("%d.%02d", r.IntN(100), r.IntN(100))
	case 4:
		d := make([]byte, 1+r.IntN(38))
		for i := range d {
			d[i] = byte('1' + r.IntN(9))
		}
		return string(d) + "e" + strconv.Itoa(r.IntN(200)-120)
	case 5:
		return []string{"0", "-0", "1e125", "-1e-130", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1e21", "0.1"}[r.IntN(9)]
	default:
		return strconv.FormatFloat(float64(r.IntN(100))+0.5, 'f', -1, 64)
	}
}

func genValue(r *rand.Rand, level int) any {
	k := r.IntN(9)
	if level >= 6 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return genString(r)
	case 3, 4:
		n, err := storage.CanonicalNumber(genNumber(r))
		if err != nil {
			return "not a number"
		}
		return n
	case 5:
		if r.IntN(4) == 0 {
			return []byte(genString(r))
		}
		return fmt.Sprint(r.IntN(3)) // few distinct strings
	case 6, 7:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = genValue(r, level+1)
		}
		return l
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[genString(r)+"k"] = genValue(r, level+1)
		}
		return m
	}
}
