package agg

import (
	"encoding/json"
	"errors"
	"strconv"
)

// rollupFormat is the format of the rollup items this version writes, in
// their attribute "v": 2 since sums are exact decimals. A rollup of
// another format is stale, and computed again from raw events.
const rollupFormat = "2"

// Encode returns a rollup item's attributes, but covered. A sum is the
// exact decimal as a string, since it may have more digits than a
// DynamoDB number holds; minimums and maximums are values of events, and
// numbers.
func (p *Summary) Encode() map[string]any {
	fields := make(map[string]any, len(p.fields)+1)
	for name, fp := range p.all() {
		fp.flushSum()
		m := map[string]any{
			"count": json.Number(strconv.FormatInt(fp.count, 10)),
			"first": fp.first, "first_t": fp.firstK.sortKey(),
			"last": fp.last, "last_t": fp.lastK.sortKey(),
		}
		if fp.nonnum {
			m["nonnum"] = true
		} else {
			m["sum"] = string(decimalNumber(&fp.sum))
			m["min"], m["max"] = decimalNumber(&fp.min), decimalNumber(&fp.max)
		}
		fields[name] = m
	}
	return map[string]any{
		"v":      json.Number(rollupFormat),
		"events": json.Number(strconv.FormatInt(p.Events, 10)),
		"fields": fields,
	}
}

var (
	errBadRollup = errors.New("timetable: malformed rollup")
	// ErrOldRollup is a rollup of an earlier format: stale, not
	// malformed.
	ErrOldRollup = errors.New("timetable: rollup of an earlier format")
)

// DecodeRollup reads a series' rollup item: ErrOldRollup when it is of
// an earlier format.
func DecodeRollup(attrs map[string]any, series string) (*Summary, error) {
	if v, _ := attrs["v"].(json.Number); v != rollupFormat {
		return nil, ErrOldRollup
	}
	count := func(v any) (int64, error) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, errBadRollup
		}
		return strconv.ParseInt(string(n), 10, 64)
	}
	events, err := count(attrs["events"])
	if err != nil {
		return nil, errBadRollup
	}
	fields, ok := attrs["fields"].(map[string]any)
	if !ok {
		return nil, errBadRollup
	}
	p := &Summary{Events: events}
	for name, v := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errBadRollup
		}
		fp := p.field(name)
		n, err := count(m["count"])
		ft, _ := m["first_t"].(string)
		lt, _ := m["last_t"].(string)
		firstK, ok1 := orderKeyOf(ft, series)
		lastK, ok2 := orderKeyOf(lt, series)
		if err != nil || n <= 0 || !ok1 || !ok2 {
			return nil, errBadRollup
		}
		fp.count = n
		fp.first, fp.firstK = m["first"], firstK
		fp.last, fp.lastK = m["last"], lastK
		if m["nonnum"] == true {
			fp.nonnum = true
			continue
		}
		sum, ok := m["sum"].(string)
		if !ok || !parseDecimal(&fp.sum, sum) || !decimalOf(&fp.min, m["min"]) || !decimalOf(&fp.max, m["max"]) {
			return nil, errBadRollup
		}
	}
	return p, nil
}
