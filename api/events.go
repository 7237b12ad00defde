package api

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Event is an event as the API takes and answers it, in a JSON array or
// one a line (NDJSON).
//
// The server writes events itself, fields in name order, strings
// escaped as JSON needs and no more; encoding/json, which also escapes
// <, > and &, writes the same event in other bytes of the same meaning.
type Event struct {
	// Time is the event's time; the server answers it in UTC, RFC 3339
	// with as many fractional digits as it needs. A write needs it
	// (in JSON, Unix milliseconds too), unless the server stamps events
	// without one with the time it receives them; zero leaves it out.
	Time time.Time `json:"time,omitzero"`
	// Series is the event's series, "" for none.
	Series string `json:"series,omitempty"`
	// ID is the event's id: the server makes one from the event's
	// content when a write leaves it out.
	ID string `json:"id,omitempty"`
	// Fields are the event's fields; numbers are read as json.Number,
	// exact.
	Fields map[string]any `json:"fields"`
}

// Written is the answer of POST /v1/tables/{table}/events: every event of
// the request is durable.
type Written struct {
	// Written is the number of events written.
	Written int `json:"written"`
}

// Media types of a write's body.
const (
	// MediaJSON is a JSON array of events; the server reads a body
	// without a Content-Type as one.
	MediaJSON = "application/json"
	// MediaNDJSON is one event a line.
	MediaNDJSON = "application/x-ndjson"
)

// Query is a request of GET /v1/tables/{table}/events: its parameters, as
// Values writes them.
type Query struct {
	// From and To bound the range, both inclusive; a zero time is left to
	// the server (To: now; From: To less the server's query range).
	From, To time.Time
	// Series is the one series to read, or "" for every series.
	Series string
	// Desc asks for the newest events first.
	Desc bool
	// Limit bounds the page (0: the server's default).
	Limit int
	// Cursor is the NextCursor of the page before, to read the next; it
	// carries the range it was issued for, so From and To may be left
	// zero with it.
	Cursor string
	// Fields are the only fields to answer, nil for all.
	Fields []string
	// Filter is an expression of package filter's language, or "".
	Filter string
}

// Values returns the query's parameters.
func (q Query) Values() url.Values {
	p := url.Values{}
	setTime(p, "from", q.From)
	setTime(p, "to", q.To)
	set(p, "series", q.Series)
	if q.Desc {
		p.Set("order", "desc")
	}
	if q.Limit > 0 {
		p.Set("limit", strconv.Itoa(q.Limit))
	}
	set(p, "cursor", q.Cursor)
	if q.Fields != nil {
		p.Set("fields", strings.Join(q.Fields, ","))
	}
	set(p, "filter", q.Filter)
	return p
}

// Page is the answer of GET /v1/tables/{table}/events: a page of events
// in time order (newest first with order=desc).
type Page struct {
	Events []Event `json:"events"`
	// NextCursor, absent on the last page, asks for the next page as the
	// cursor parameter.
	NextCursor string `json:"next_cursor,omitempty"`
	// Gaps, absent when every table of the range was read (live or from
	// its archive), are the parts of the range whose events are gone: a
	// table deleted with no archive this server reads.
	Gaps []Gap `json:"gaps,omitempty"`
}

// Gap is a part of a query's range whose events are gone.
type Gap struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Table  string    `json:"table"`
	Reason string    `json:"reason"`
}
