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
//     before highKey's "$", so one key range selects a time range in
//     either layout;
//   - a data partition ends in "#" and digits, a marker partition in
//     "#~v", a rollup partition in "#~r" and a unit, and the series index
//     has a single "#": parsePartitionKey tells an event partition from
//     every other, whatever the series.
//
// The meta table's keys are in package metatable.

package engine

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// timeLayout formats event times in sort keys: fixed width, so that
// bytewise order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

const timeKeyLen = len(timeLayout)

// partitionKey returns the partition key of a series shard in the row
// layout.
func partitionKey(tenant, table, series string, shard int) string {
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

// seriesIndexKey returns the partition key of a logical table's series
// index in a physical table. It has one "#", where data partitions have at
// least three, so the two never meet.
func seriesIndexKey(tenant, table string) string { return tenant + "#" + table }

var errBadKey = errors.New("timetable: not a row key")

// parsePartitionKey splits a row-layout partition key.
func parsePartitionKey(pk string) (tenant, table, series string, shard int, err error) {
	i := strings.IndexByte(pk, '#')
	if i < 0 {
		return "", "", "", 0, errBadKey
	}
	j := strings.IndexByte(pk[i+1:], '#')
	k := strings.LastIndexByte(pk, '#')
	if j < 0 || i+1+j == k {
		return "", "", "", 0, errBadKey
	}
	j += i + 1
	shard, err = strconv.Atoi(pk[k+1:])
	if err != nil || shard < 0 || strconv.Itoa(shard) != pk[k+1:] {
		return "", "", "", 0, errBadKey
	}
	return pk[:i], pk[i+1 : j], pk[j+1 : k], shard, nil
}

// timeKey returns the sort-key prefix of an instant.
func timeKey(t time.Time) string {
	var buf [timeKeyLen]byte
	return string(appendTimeKey(buf[:0], t))
}

// sortKey returns the sort key of an event.
func sortKey(t time.Time, id string) string {
	var small [timeKeyLen + 1 + 32]byte
	buf := appendTimeKey(small[:0], t)
	buf = append(buf, '#')
	buf = append(buf, id...)
	return string(buf)
}

// appendTimeKey appends t in timeLayout, in UTC. It writes the digits by
// hand, as parseTimeKey reads them: it runs once per event written, and
// time.Time.AppendFormat interprets its layout each time. A year outside
// 0 to 9999, which no event has, goes through AppendFormat.
func appendTimeKey(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeLayout)
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

// highKey returns a sort key above every event at instant t and below
// every event after it: '$' follows '#'.
func highKey(t time.Time) string { return timeKey(t) + "$" }

// parseSortKey splits a row-layout sort key. It reads the fixed-width
// time by hand: it runs once per event read.
func parseSortKey(sk string) (time.Time, string, error) {
	if !isRowSortKey(sk) {
		return time.Time{}, "", errBadKey
	}
	t, ok := parseTimeKey(sk[:timeKeyLen])
	if !ok {
		return time.Time{}, "", errBadKey
	}
	return t, sk[timeKeyLen+1:], nil
}

// parseTimeKey reads a time in timeLayout.
func parseTimeKey(s string) (time.Time, bool) {
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

// timeOfDay reads the time of day of a time in timeLayout.
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

// timeKeys reads the times of sort keys that mostly share their day with
// the key before, as the keys of a partition do: it reads each day once,
// and of each key only its time of day.
type timeKeys struct {
	day      [10]byte // the last day read, as in the key
	midnight int64    // its start, Unix nanoseconds
	set      bool
}

// nanos returns the time of a sort key's time prefix s, in Unix
// nanoseconds, as parseTimeKey reads it.
func (c *timeKeys) nanos(s string) (int64, bool) {
	if c.set && s[:10] == string(c.day[:]) {
		of, ok := timeOfDay(s)
		return c.midnight + int64(of), ok
	}
	t, ok := parseTimeKey(s)
	if !ok {
		return 0, false
	}
	of, _ := timeOfDay(s)
	copy(c.day[:], s[:10])
	c.midnight, c.set = t.UnixNano()-int64(of), true
	return t.UnixNano(), true
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,255}$`)

// validTableName reports whether a logical table name is valid: 1 to 255
// of A-Z, a-z, 0-9, "_", "." and "-", the characters of DynamoDB table
// names.
// "." and "..", though of those characters, are refused: in a URL path they
// are the path's own steps, and no client could name such a table.
func validTableName(name string) bool {
	return name != "." && name != ".." && validName.MatchString(name)
}

// checkTableName returns ErrBadTableName for an invalid logical table name.
func checkTableName(name string) error {
	if !validTableName(name) {
		return fmt.Errorf("%w: table %q: use 1 to 255 of A-Z, a-z, 0-9, _, . and -, other than . and ..", ErrBadTableName, name)
	}
	return nil
}

// mapSortKey returns the sort key of the item seq (0 for the first,
// 1, 2, … for continuation items) of millisecond ms. "!" sorts before
// the "#" of row keys and both before the "$" of highKey, so a time range
// selects map items with the same key conditions as rows.
func mapSortKey(ms time.Time, seq int) string {
	return timeKey(ms) + "!" + strconv.Itoa(seq)
}

// isMapSortKey reports whether sk is a map-layout item's sort key.
func isMapSortKey(sk string) bool { return len(sk) > timeKeyLen && sk[timeKeyLen] == '!' }

// isRowSortKey reports whether sk has the shape of a row-layout event's
// sort key: a time, "#", and an id of at least one byte.
func isRowSortKey(sk string) bool { return len(sk) >= timeKeyLen+2 && sk[timeKeyLen] == '#' }

// markerKey returns the partition key of a logical table's version
// markers in a physical table: "#~" ends it, where data partitions end in
// "#<digits>" and the series index has a single "#".
func markerKey(tenant, table string) string { return tenant + "#" + table + "#~v" }

// markerSortKey returns the sort key of a version marker.
func markerSortKey(unit string, start time.Time, series string) string {
	return unit + "#" + timeKey(start) + "#" + series
}

// parseMarkerSortKey splits a version marker's sort key.
func parseMarkerSortKey(sk string) (unit string, start time.Time, series string, ok bool) {
	unit, rest, found := strings.Cut(sk, "#")
	if !found || len(rest) < timeKeyLen+1 || rest[timeKeyLen] != '#' {
		return "", time.Time{}, "", false
	}
	start, ok = parseTimeKey(rest[:timeKeyLen])
	return unit, start, rest[timeKeyLen+1:], ok
}

// rollupKey returns the partition key of a series' rollups of one unit.
func rollupKey(tenant, table, series, unit string) string {
	return tenant + "#" + table + "#" + series + "#~r" + unit
}

// seriesIndexPrefix starts the sort key of a series index entry: keys
// cannot be empty, and the empty series is a series.
const seriesIndexPrefix = "s:"
