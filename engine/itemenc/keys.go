// This file builds and parses every key of a data table. One physical
// table holds five kinds of items, told apart by their keys (tenant and
// logical table names cannot hold "#"; a series can hold anything):
//
//	kind            partition key                    sort key
//	event (row)     {tenant}#{table}#{series}#{n}    {time}#{id}
//	events (map)    {tenant}#{table}#{series}#{n}    {time to the ms}!{seq}
//	series index    {tenant}#{table}                 s:{series}
//	version marker  {tenant}#{table}#~v              {unit}#{time}#{series}
//	rollup          {tenant}#{table}#{series}#~r{u}  {time}
//
// {time} is RFC 3339 in UTC with exactly nine fractional digits (fixed
// width, so bytewise order is time order) and {n} the shard, in decimal
// without leading zeros. The reads rely on how these sort (keys_test.go
// holds them to it):
//
//   - within a series shard, items sort by time; at one instant the map
//     item of its millisecond ("!") sorts before its rows ("#"), and both
//     before HighKey's "$", so one key range selects a time range in
//     either layout;
//   - a data partition ends in "#" and digits, a marker partition in
//     "#~v", a rollup partition in "#~r" and a unit, and the series index
//     has a single "#": ParsePartitionKey tells an event partition from
//     every other, whatever the series.
//
// The meta table's keys are in package metatable.

package itemenc

import (
	"errors"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeLayout formats event times in sort keys: fixed width, so that
// bytewise order is time order.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// TimeKeyLen is the length of a time in a sort key.
const TimeKeyLen = len(TimeLayout)

// PartitionKey returns the partition key of a series shard in the row
// layout.
func PartitionKey(tenant, table, series string, shard int) string {
	var b strings.Builder
	b.Grow(len(tenant) + len(table) + len(series) + 6)
	b.WriteString(tenant)
	b.WriteByte('#')
	b.WriteString(table)
	b.WriteByte('#')
	b.WriteString(series)
	b.WriteByte('#')
	b.WriteString(strconv.Itoa(shard))
	return b.String()
}

// AppendPartitionKey appends PartitionKey(tenant, table, series, shard)
// to dst.
func AppendPartitionKey(dst []byte, tenant, table, series string, shard int) []byte {
	dst = append(dst, tenant...)
	dst = append(dst, '#')
	dst = append(dst, table...)
	dst = append(dst, '#')
	dst = append(dst, series...)
	dst = append(dst, '#')
	return strconv.AppendInt(dst, int64(shard), 10)
}

// AppendSortKey appends SortKey(t, id) to dst.
func AppendSortKey(dst []byte, t time.Time, id string) []byte {
	dst = AppendTimeKey(dst, t)
	dst = append(dst, '#')
	return append(dst, id...)
}

// SeriesIndexKey returns the partition key of a logical table's series
// index in a physical table. It has one "#", where data partitions have at
// least three, so the two never meet.
func SeriesIndexKey(tenant, table string) string { return tenant + "#" + table }

// ErrBadKey is returned for a key that is not a row-layout event's.
var ErrBadKey = errors.New("timetable: not a row key")

// ParsePartitionKey splits a row-layout partition key.
func ParsePartitionKey(pk string) (tenant, table, series string, shard int, err error) {
	i := strings.IndexByte(pk, '#')
	if i < 0 {
		return "", "", "", 0, ErrBadKey
	}
	j := strings.IndexByte(pk[i+1:], '#')
	k := strings.LastIndexByte(pk, '#')
	if j < 0 || i+1+j == k {
		return "", "", "", 0, ErrBadKey
	}
	j += i + 1
	shard, err = strconv.Atoi(pk[k+1:])
	if err != nil || shard < 0 || strconv.Itoa(shard) != pk[k+1:] {
		return "", "", "", 0, ErrBadKey
	}
	return pk[:i], pk[i+1 : j], pk[j+1 : k], shard, nil
}

// TimeKey returns the sort-key prefix of an instant.
func TimeKey(t time.Time) string {
	var buf [TimeKeyLen]byte
	return string(AppendTimeKey(buf[:0], t))
}

// SortKey returns the sort key of an event.
func SortKey(t time.Time, id string) string {
	var small [TimeKeyLen + 1 + 32]byte
	return string(AppendSortKey(small[:0], t, id))
}

// AppendTimeKey appends t in TimeLayout, in UTC. It writes the digits by
// hand, as ParseTimeKey reads them: it runs once per event written, and
// time.Time.AppendFormat interprets its layout each time. A year outside
// 0 to 9999, which no event has, goes through AppendFormat.
func AppendTimeKey(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, TimeLayout)
	}
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, 'T'), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), sec, 2)
	b = appendDigits(append(b, '.'), t.Nanosecond(), 9)
	return append(b, 'Z')
}

// appendDigits appends v, which is not negative, as n decimal digits,
// zero-padded.
func appendDigits(b []byte, v, n int) []byte {
	b = append(b, make([]byte, n)...)
	for i := len(b) - 1; i >= len(b)-n; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// AppendTimePrefix appends the shortest prefix of t's time key of which
// that key is the least: the key without its trailing zeros and the
// separators among them ("2026-12-06T10:00:00.000000000Z" gives
// "2026-12-06T1"). Every time key before t's sorts before the prefix,
// and every one from t's on after it, so a prefix followed by a byte
// below the separators and digits ('"', say) sorts between the keys of
// the instants before t and those of t on: it stands for the instant t
// in fewer bytes. A prefix keeps at least the month and the day's first
// digit, since no month or day is zero.
func AppendTimePrefix(dst []byte, t time.Time) []byte {
	n := len(dst)
	dst = AppendTimeKey(dst, t)
	k := len(dst)
	for k > n && strings.IndexByte("0T:.Z", dst[k-1]) >= 0 {
		k--
	}
	return dst[:k]
}

// leastTimeKey completes a time prefix to the least key it starts.
const leastTimeKey = "0000-00-00T00:00:00.000000000Z"

// ParseTimePrefix reads a prefix that AppendTimePrefix writes, or a
// whole time key: the instant whose key is the least to start with p.
// It refuses a prefix AppendTimePrefix would not write.
func ParseTimePrefix(p string) (time.Time, bool) {
	if len(p) > TimeKeyLen || len(p) == 0 {
		return time.Time{}, false
	}
	if len(p) == TimeKeyLen {
		return ParseTimeKey(p)
	}
	var key [TimeKeyLen]byte
	copy(key[copy(key[:], p):], leastTimeKey[len(p):])
	t, ok := ParseTimeKey(string(key[:]))
	if !ok || strings.IndexByte("0T:.Z", p[len(p)-1]) >= 0 {
		return time.Time{}, false
	}
	return t, true
}

// IsTimePrefix reports whether p has the characters of a time key's
// first len(p) bytes: digits where it has digits, its separators
// where it has them. It does not check the digits' ranges.
func IsTimePrefix(p string) bool {
	if len(p) > TimeKeyLen {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := leastTimeKey[i]; c == '0' {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		} else if p[i] != c {
			return false
		}
	}
	return true
}

// HighKey returns a sort key above every event at instant t and below
// every event after it: '$' follows '#'.
func HighKey(t time.Time) string { return TimeKey(t) + "$" }

// ParseSortKey splits a row-layout sort key. It reads the fixed-width
// time by hand: it runs once per event read.
func ParseSortKey(sk string) (time.Time, string, error) {
	if !IsRowSortKey(sk) {
		return time.Time{}, "", ErrBadKey
	}
	t, ok := ParseTimeKey(sk[:TimeKeyLen])
	if !ok {
		return time.Time{}, "", ErrBadKey
	}
	return t, sk[TimeKeyLen+1:], nil
}

// ParseTimeKey reads a time in TimeLayout.
func ParseTimeKey(s string) (time.Time, bool) {
	// 2006-01-02T15:04:05.000000000Z
	// 0123456789012345678901234567890
	if s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	of, ok4 := timeOfDay(s)
	if !(ok1 && ok2 && ok3 && ok4) || month < 1 || month > 12 || day < 1 || day > 31 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Add(of)
	if t.Day() != day {
		return time.Time{}, false // February 30th and the like
	}
	return t, true
}

// timeOfDay reads the time of day of a time in TimeLayout.
func timeOfDay(s string) (time.Duration, bool) {
	if s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[29] != 'Z' {
		return 0, false
	}
	hour, ok1 := digits(s[11:13])
	minute, ok2 := digits(s[14:16])
	sec, ok3 := digits(s[17:19])
	nsec, ok4 := digits(s[20:29])
	if !(ok1 && ok2 && ok3 && ok4) || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	return time.Duration((hour*60+minute)*60+sec)*time.Second + time.Duration(nsec), true
}

// digits reads a decimal number of only digits.
func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// TimeKeys reads the times of sort keys that mostly share their day with
// the key before, as the keys of a partition do: it reads each day once,
// and of each key only its time of day.
type TimeKeys struct {
	day      [10]byte // the last day read, as in the key
	midnight int64    // its start, Unix nanoseconds
	set      bool
}

// Nanos returns the time of a sort key's time prefix s, in Unix
// nanoseconds, as ParseTimeKey reads it.
func (c *TimeKeys) Nanos(s string) (int64, bool) {
	if c.set && s[:10] == string(c.day[:]) {
		of, ok := timeOfDay(s)
		return c.midnight + int64(of), ok
	}
	t, ok := ParseTimeKey(s)
	if !ok {
		return 0, false
	}
	of, _ := timeOfDay(s)
	copy(c.day[:], s[:10])
	c.midnight, c.set = t.UnixNano()-int64(of), true
	return t.UnixNano(), true
}

// PrefixNanos returns the time of a time prefix p, or a whole time
// key, in Unix nanoseconds, as ParseTimePrefix reads it: the day read
// once, as Nanos reads it.
func (c *TimeKeys) PrefixNanos(p string) (int64, bool) {
	if len(p) > TimeKeyLen || len(p) == 0 || len(p) < TimeKeyLen && strings.IndexByte("0T:.Z", p[len(p)-1]) >= 0 {
		return 0, false
	}
	var key [TimeKeyLen]byte
	copy(key[copy(key[:], p):], leastTimeKey[len(p):])
	return c.Nanos(string(key[:]))
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,255}$`)

// ValidTableName reports whether a logical table name is valid: 1 to 255
// of A-Z, a-z, 0-9, "_", "." and "-", the characters of DynamoDB table
// names.
// "." and "..", though of those characters, are refused: in a URL path they
// are the path's own steps, and no client could name such a table.
func ValidTableName(name string) bool {
	return name != "." && name != ".." && validName.MatchString(name)
}

// MapSortKey returns the sort key of the item seq (0 for the first,
// 1, 2, … for continuation items) of millisecond ms. "!" sorts before
// the "#" of row keys and both before the "$" of HighKey, so a time range
// selects map items with the same key conditions as rows.
func MapSortKey(ms time.Time, seq int) string {
	return TimeKey(ms) + "!" + strconv.Itoa(seq)
}

// IsMapSortKey reports whether sk is a map-layout item's sort key.
func IsMapSortKey(sk string) bool { return len(sk) > TimeKeyLen && sk[TimeKeyLen] == '!' }

// IsRowSortKey reports whether sk has the shape of a row-layout event's
// sort key: a time, "#", and an id of at least one byte.
func IsRowSortKey(sk string) bool { return len(sk) >= TimeKeyLen+2 && sk[TimeKeyLen] == '#' }

// MarkerKey returns the partition key of a logical table's version
// markers in a physical table: "#~" ends it, where data partitions end in
// "#<digits>" and the series index has a single "#".
func MarkerKey(tenant, table string) string { return tenant + "#" + table + "#~v" }

// MarkerSortKey returns the sort key of a version marker.
func MarkerSortKey(unit string, start time.Time, series string) string {
	return unit + "#" + TimeKey(start) + "#" + series
}

// ParseMarkerSortKey splits a version marker's sort key.
func ParseMarkerSortKey(sk string) (unit string, start time.Time, series string, ok bool) {
	unit, rest, found := strings.Cut(sk, "#")
	if !found || len(rest) < TimeKeyLen+1 || rest[TimeKeyLen] != '#' {
		return "", time.Time{}, "", false
	}
	start, ok = ParseTimeKey(rest[:TimeKeyLen])
	return unit, start, rest[TimeKeyLen+1:], ok
}

// RollupKey returns the partition key of a series' rollups of one unit.
func RollupKey(tenant, table, series, unit string) string {
	return tenant + "#" + table + "#" + series + "#~r" + unit
}

// SeriesIndexPrefix starts the sort key of a series index entry: keys
// cannot be empty, and the empty series is a series.
const SeriesIndexPrefix = "s:"

// Shard returns the shard of an event id in a table of shards shards:
// FNV-1a of the id modulo the shard count, so a retry lands on the same
// item, and an archive's reader finds the event's partition again.
func Shard(id string, shards int) int {
	if shards <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(shards))
}
