package client

import (
	"context"
	"fmt"
	"iter"
	"net/http"

	"github.com/timetabledb/timetable/api"
)

// Write writes events to a logical table of the key's tenant, in one
// request as NDJSON, and returns how many were written: all of them, or
// an error. A request the server refuses for some of its events is an
// *Error whose Body.Problems name them by index in events; nothing was
// written then.
func (c *Client) Write(ctx context.Context, table string, events []api.Event) (int, error) {
	var body []byte
	for i, e := range events {
		b, err := marshal(e)
		if err != nil {
			return 0, fmt.Errorf("event %d: %w", i, err)
		}
		body = append(append(body, b...), '\n')
	}
	return c.WriteBody(ctx, table, api.MediaNDJSON, body)
}

// WriteBody writes a body of events already encoded as contentType,
// api.MediaJSON (an array) or api.MediaNDJSON (one a line), and returns
// how many were written.
func (c *Client) WriteBody(ctx context.Context, table, contentType string, body []byte) (int, error) {
	var answer api.Written
	err := c.do(ctx, http.MethodPost, path(api.PathEvents, table), nil, contentType, body, &answer)
	return answer.Written, err
}

// Query returns a page of a logical table's events. Its NextCursor, set
// as the Cursor of the same query, asks for the next page.
func (c *Client) Query(ctx context.Context, table string, q api.Query) (api.Page, error) {
	var page api.Page
	err := c.do(ctx, http.MethodGet, path(api.PathEvents, table), q.Values(), "", nil, &page)
	return page, err
}

// Events returns every event a query asks for, page after page from the
// query's cursor on, until the last page or the first error.
func (c *Client) Events(ctx context.Context, table string, q api.Query) iter.Seq2[api.Event, error] {
	return func(yield func(api.Event, error) bool) {
		for {
			page, err := c.Query(ctx, table, q)
			if err != nil {
				yield(api.Event{}, err)
				return
			}
			for _, e := range page.Events {
				if !yield(e, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			q.Cursor = page.NextCursor
		}
	}
}

// Aggregate returns a logical table's events summarised in buckets, or
// with GroupBy a page of groups whose NextGroup, set as GroupAfter,
// asks for the next.
func (c *Client) Aggregate(ctx context.Context, table string, q api.AggregateQuery) (api.Aggregate, error) {
	var answer api.Aggregate
	err := c.do(ctx, http.MethodGet, path(api.PathAggregate, table), q.Values(), "", nil, &answer)
	return answer, err
}

// Tables returns the logical tables of the key's tenant.
func (c *Client) Tables(ctx context.Context) ([]api.LogicalTable, error) {
	var answer api.LogicalTables
	err := c.do(ctx, http.MethodGet, api.PathTables, nil, "", nil, &answer)
	return answer.Tables, err
}

// Series returns a page of a logical table's series.
func (c *Client) Series(ctx context.Context, table string, q api.SeriesQuery) (api.SeriesPage, error) {
	var page api.SeriesPage
	err := c.do(ctx, http.MethodGet, path(api.PathSeries, table), q.Values(), "", nil, &page)
	return page, err
}

// Ready returns nil when the server is ready to serve (GET /readyz),
// and else its *Error, whose message is the reason.
func (c *Client) Ready(ctx context.Context) error {
	var h api.Health
	return c.do(ctx, http.MethodGet, api.PathReadyz, nil, "", nil, &h)
}
