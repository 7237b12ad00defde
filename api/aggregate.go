package api

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// AggregateQuery is a request of GET /v1/tables/{table}/aggregate: its
// parameters, as Values writes them.
type AggregateQuery struct {
	// From and To bound the range, both inclusive; a zero time is left to
	// the server (To: now; From: To less the server's query range).
	From, To time.Time
	// Series is the one series to read, or "" for every series.
	Series string
	// Bucket is the buckets' length: a duration that divides a day ("1m",
	// "1h", "1d") or a calendar unit ("1w", "week:monday", "1mo",
	// "quarter"). Required.
	Bucket string
	// Fields are the fields to summarise, Funcs the functions (count,
	// sum, min, max, avg, first, last, delta, rate...). Funcs is
	// required; Fields may be left out when Funcs is count alone.
	Fields, Funcs []string
	// Fill asks for the empty buckets too.
	Fill bool
	// Filter is an expression of package filter's language, or "".
	Filter string
	// GroupBy groups the answer by "series" or by a field's value;
	// GroupLimit bounds a page of groups (0: the server's default) and
	// GroupAfter, the NextGroup of the page before, asks for the next.
	GroupBy    string
	GroupLimit int
	GroupAfter *string
}

// Values returns the query's parameters.
func (q AggregateQuery) Values() url.Values {
	p := url.Values{}
	setTime(p, "from", q.From)
	setTime(p, "to", q.To)
	set(p, "series", q.Series)
	set(p, "bucket", q.Bucket)
	set(p, "fields", strings.Join(q.Fields, ","))
	set(p, "fn", strings.Join(q.Funcs, ","))
	if q.Fill {
		p.Set("fill", "true")
	}
	set(p, "filter", q.Filter)
	set(p, "group_by", q.GroupBy)
	if q.GroupLimit > 0 {
		p.Set("group_limit", strconv.Itoa(q.GroupLimit))
	}
	if q.GroupAfter != nil {
		p.Set("group_after", *q.GroupAfter)
	}
	return p
}

// set sets a parameter that is not empty.
func set(p url.Values, name, v string) {
	if v != "" {
		p.Set(name, v)
	}
}

// setTime sets a time parameter that is not zero, in RFC 3339 with as
// many fractional digits as it needs.
func setTime(p url.Values, name string, t time.Time) {
	if !t.IsZero() {
		p.Set(name, t.UTC().Format(time.RFC3339Nano))
	}
}

// Group is one group of a grouped aggregate: a series, or a value of the
// field the query groups by, and its buckets.
type Group struct {
	// Key is the series, or the field's value.
	Key     string   `json:"group"`
	Buckets []Bucket `json:"buckets"`
}

// Aggregate is the answer of GET /v1/tables/{table}/aggregate: Buckets,
// or with group_by a page of Groups and the NextGroup to ask for the next
// page (absent on the last).
type Aggregate struct {
	// Buckets are the buckets of an aggregate without group_by, in time
	// order ([] when there are none); nil with group_by.
	Buckets []Bucket `json:"buckets,omitzero"`
	// Groups are a page of groups, in key order, with group_by ([] when
	// there are none); nil without.
	Groups []Group `json:"groups,omitzero"`
	// NextGroup is the group_after of the next page of groups, nil on the
	// last page.
	NextGroup *string `json:"next_group,omitempty"`
	// Rollups says, for a table that keeps rollups, whether they served
	// the answer, and if not why.
	Rollups string `json:"rollups,omitempty"`
	// Gaps are the parts of the range whose events are gone (the table
	// deleted with no archive to read), left out of the buckets, as a
	// page of events names them; absent when there are none.
	Gaps []Gap `json:"gaps,omitempty"`
}

// aggregateJSON is an Aggregate with the encoding encoding/json gives
// its fields.
type aggregateJSON Aggregate

// MarshalJSON writes the answer as the server does: AppendJSON.
func (a Aggregate) MarshalJSON() ([]byte, error) {
	return a.AppendJSON(nil)
}

// AppendJSON appends the answer's JSON to dst: the bytes encoding/json
// writes for its fields, buckets written by Bucket.AppendJSON without
// reflection when there are no groups.
func (a Aggregate) AppendJSON(dst []byte) ([]byte, error) {
	if a.Groups != nil || a.Buckets == nil {
		b, err := json.Marshal(aggregateJSON(a))
		return append(dst, b...), err
	}
	dst = append(dst, `{"buckets":[`...)
	var names bucketNames
	for i, b := range a.Buckets {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = b.appendJSON(dst, &names); err != nil {
			return nil, err
		}
	}
	dst = append(dst, ']')
	if a.NextGroup != nil {
		dst = append(dst, `,"next_group":`...)
		dst = appendJSONString(dst, *a.NextGroup)
	}
	if a.Rollups != "" {
		dst = append(dst, `,"rollups":`...)
		dst = appendJSONString(dst, a.Rollups)
	}
	if len(a.Gaps) > 0 {
		gaps, err := json.Marshal(a.Gaps)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `,"gaps":`...), gaps...)
	}
	return append(dst, '}'), nil
}
