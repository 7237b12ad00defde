package event

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/timetabledb/timetable/storage"
)

// reservedPrefix starts the names of timetable's own attributes.
const reservedPrefix = "tt_"

// Validate checks an event built in Go against the rules of the package
// documentation, with now as the current time, and normalizes it in
// place: Time becomes UTC, and every number in Fields becomes a canonical
// json.Number, including Go numbers (int, int8 to int64, uint to uint64,
// float32, float64), which are converted. Fields may also hold []byte
// values, which JSON input cannot produce. Validate rewrites values inside
// the maps and slices of Fields, which the caller must not share with
// another goroutine meanwhile. It returns an error wrapping
// *ValidationError giving the first problem found, or an error wrapping
// ErrInvalidLimits.
func Validate(e *Event, lim Limits, now time.Time) error {
	if err := lim.Validate(); err != nil {
		return err
	}
	lim = lim.WithDefaults()
	if reason := validate(e, &lim, now); reason != "" {
		return &ValidationError{Reason: reason}
	}
	return nil
}

func validate(e *Event, lim *Limits, now time.Time) string {
	if e.Time.IsZero() {
		if !lim.ReceiveTime {
			return reasonTimeAbsent
		}
		e.Time = now
	}
	e.Time = e.Time.UTC()
	if reason := checkTime(e.Time, lim, now); reason != "" {
		return reason
	}
	if reason := checkText("series", e.Series, lim.MaxSeries); reason != "" {
		return reason
	}
	if e.ID != "" {
		if reason := checkText("id", e.ID, lim.MaxID); reason != "" {
			return reason
		}
	}
	if len(e.Fields) > lim.MaxFields {
		return fieldCountReason(len(e.Fields), lim)
	}
	// Map order is random: report the problem of the smallest name, so
	// that the same event always gives the same reason.
	var badName, badReason string
	for name, v := range e.Fields {
		reason := checkFieldName(name, lim)
		if reason == "" && !utf8.ValidString(name) {
			reason = "fields: name with invalid UTF-8"
		}
		if reason == "" {
			nv, changed, path, r := normalize(v, 1, lim)
			if r == "" {
				if changed {
					e.Fields[name] = nv
				}
				continue
			}
			reason = "fields." + name + path + ": " + r
		}
		if badReason == "" || name < badName {
			badName, badReason = name, reason
		}
	}
	return badReason
}

// normalize checks a field value at the given level (1 for a field, one
// more for each object or array around it; see Limits.MaxDepth). It returns
// the value with its numbers canonical, and whether that differs from v (v
// itself is returned otherwise, so that a valid event costs no allocation),
// or the path below the value and the reason it is refused. Maps and slices
// are normalized in place.
func normalize(v any, level int, lim *Limits) (nv any, changed bool, path, reason string) {
	switch x := v.(type) {
	case nil, bool, []byte:
		return v, false, "", ""
	case string:
		if !utf8.ValidString(x) {
			return nil, false, "", "invalid UTF-8"
		}
		return v, false, "", ""
	case json.Number:
		var buf [48]byte
		b, reason := appendNumber(buf[:0], x)
		if reason != "" {
			return nil, false, "", reason
		}
		if string(b) == string(x) {
			return v, false, "", ""
		}
		return json.Number(b), true, "", ""
	case float64:
		return normalizeFloat(x, 64)
	case float32:
		return normalizeFloat(float64(x), 32)
	case int:
		return json.Number(strconv.FormatInt(int64(x), 10)), true, "", ""
	case int8:
		return json.Number(strconv.FormatInt(int64(x), 10)), true, "", ""
	case int16:
		return json.Number(strconv.FormatInt(int64(x), 10)), true, "", ""
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10)), true, "", ""
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true, "", ""
	case uint:
		return json.Number(strconv.FormatUint(uint64(x), 10)), true, "", ""
	case uint8:
		return json.Number(strconv.FormatUint(uint64(x), 10)), true, "", ""
	case uint16:
		return json.Number(strconv.FormatUint(uint64(x), 10)), true, "", ""
	case uint32:
		return json.Number(strconv.FormatUint(uint64(x), 10)), true, "", ""
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), true, "", ""
	case []any:
		if level >= lim.MaxDepth {
			return nil, false, "", depthReason(lim)
		}
		for i, e := range x {
			ne, changed, path, reason := normalize(e, level+1, lim)
			if reason != "" {
				return nil, false, "[" + strconv.Itoa(i) + "]" + path, reason
			}
			if changed {
				x[i] = ne
			}
		}
		return v, false, "", ""
	case map[string]any:
		if level >= lim.MaxDepth {
			return nil, false, "", depthReason(lim)
		}
		var badKey, badPath, badReason string
		for k, e := range x {
			var ne any
			var changed bool
			var path, reason string
			if !utf8.ValidString(k) {
				reason = "key with invalid UTF-8"
			} else if reason = checkKey(k); reason == "" {
				ne, changed, path, reason = normalize(e, level+1, lim)
				path = "." + k + path
			}
			if reason == "" {
				if changed {
					x[k] = ne
				}
				continue
			}
			if badReason == "" || k < badKey {
				badKey, badPath, badReason = k, path, reason
			}
		}
		if badReason != "" {
			return nil, false, badPath, badReason
		}
		return v, false, "", ""
	default:
		return nil, false, "", fmt.Sprintf("unsupported type %T", v)
	}
}

func normalizeFloat(f float64, bits int) (any, bool, string, string) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false, "", "not finite"
	}
	var buf, out [48]byte
	b, reason := appendNumber(out[:0], strconv.AppendFloat(buf[:0], f, 'g', -1, bits))
	if reason != "" {
		return nil, false, "", reason
	}
	return json.Number(b), true, "", ""
}

func depthReason(lim *Limits) string {
	return fmt.Sprintf("nested deeper than %d levels", lim.MaxDepth)
}

func fieldCountReason(n int, lim *Limits) string {
	return fmt.Sprintf("fields: %d fields, limit %d", n, lim.MaxFields)
}

// checkText returns why a series or id is refused, or "".
func checkText(key, s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("%s: %d bytes, limit %d", key, len(s), max)
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Sprintf("%s: control character %U at byte %d", key, rune(c), i)
		}
	}
	if ascii {
		return ""
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return key + ": invalid UTF-8"
			}
		}
		if unicode.IsControl(r) {
			return fmt.Sprintf("%s: control character %U at byte %d", key, r, i)
		}
	}
	return ""
}

// checkKey returns why a key of a nested object is refused, or "":
// DynamoDB takes a map key as it takes an attribute name.
func checkKey(k string) string {
	switch {
	case k == "":
		return "empty key"
	case len(k) > storage.MaxNameBytes:
		return fmt.Sprintf("key of %d bytes, limit %d", len(k), storage.MaxNameBytes)
	}
	return ""
}

// checkFieldName returns why a top-level field name is refused, or "".
// The name is valid UTF-8: the parser allows nothing else, and validate
// checks Go names itself.
func checkFieldName(name string, lim *Limits) string {
	switch {
	case name == "":
		return "fields: empty name"
	case len(name) > lim.MaxFieldName:
		return fmt.Sprintf("fields: name of %d bytes, limit %d", len(name), lim.MaxFieldName)
	case name == "pk" || name == "sk" || strings.HasPrefix(name, reservedPrefix):
		return fmt.Sprintf("fields: name %q is reserved", name)
	}
	return ""
}
