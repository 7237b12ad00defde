package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/filter"
	"github.com/timetabledb/timetable/parquetfile"
	"github.com/timetabledb/timetable/server"
)

// queryFlags are the flags of `timetable query`.
type queryFlags struct {
	table, series, from, to, order, fields, format, filter string
	limit                                                  int
	// output is the file the events are written to; empty for
	// standard output.
	output string
	// bucket, fns, fill and groupBy ask for an aggregate instead of
	// events.
	bucket, fns, groupBy string
	fill                 bool
}

func newQueryCmd(g *globals) *cobra.Command {
	var f queryFlags
	cmd := &cobra.Command{
		Use:   "query --table T [--from TIME] [--to TIME] [--series S] [--order asc|desc] [--limit N] [--format table|json|csv|ndjson|parquet] [--output FILE]",
		Short: "Print the events of a logical table in a time range",
		Long: `query prints the events of a logical table of a tenant whose times lie in
[--from, --to], both inclusive, oldest first (or newest first with --order
desc), following cursors to the end of the range, or until --limit events
when it is set; a limit that cuts the answer is said on standard error.
TIME is RFC 3339 (2017-04-10T12:00:00.123Z), integer Unix
milliseconds, or a time relative to now: now, now-1h, now-7d, now+15m
(TIMETABLE_NOW stops the clock). As in the HTTP API, --to defaults to now
and --from to 24 hours before --to.

Formats: table (one column per field), json (an array of events, as the HTTP
API returns them), ndjson (one such event a line), csv (time,series,id, then
one column per field; a field an event lacks, or null, is an empty cell;
objects and arrays are JSON), parquet (typed columns; needs --output).

--output FILE writes the events to FILE instead of standard output, page by
page as the query returns them, under a temporary name renamed to FILE once
the last event is written, with a progress bar when standard error is a
terminal. csv, ndjson and json stream: they hold one page of events at a
time, never the answer; table waits for the last page to align its
columns, and parquet keeps the events in a temporary file until the last. csv's columns are --fields, or the fields of the first page;
fields first seen on a later page go to a last column, fields_json, which a
CSV of more than one page always has. parquet's columns are typed from every
event (a time column in nanoseconds, series, id, one column per field:
int64, exact decimal, string, boolean, binary, and fields_json for the
fields of several types): the events are kept in a temporary file and the
Parquet file written after the last. For example:

  timetable query --table cars --from 2017-04-01T00:00:00Z --to 2017-05-01T00:00:00Z \
    --format parquet --output april.parquet

--filter keeps the events an expression holds for, e.g.
  --filter 'level = "ERROR" and temp > 30'
(comparisons = != < <= > >=, and, or, not, exists(f), begins_with(f, "p");
strings in double quotes, names with other characters in backquotes).

It reads the store, or with --server (or TIMETABLE_SERVER) asks a running
server, with the API key in TIMETABLE_API_KEY, whose tenant it names; the
output is the same.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runQuery(cmd, g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.table, "table", "", "logical table")
	fl.StringVar(&f.from, "from", "", "first time of the range, inclusive (default 24 hours before --to)")
	fl.StringVar(&f.to, "to", "", "last time of the range, inclusive (default now)")
	fl.StringVar(&f.series, "series", "", "only this series (default every series)")
	fl.StringVar(&f.order, "order", "asc", "asc (oldest first) or desc")
	fl.IntVar(&f.limit, "limit", 0, "most events to print (default: every event of the range)")
	fl.StringVar(&f.fields, "fields", "", "comma-separated fields to print (default all)")
	fl.StringVar(&f.filter, "filter", "", `only the events this expression holds for, e.g. 'level = "ERROR" and temp > 30'`)
	fl.StringVar(&f.format, "format", "table", "output format: table, json, ndjson, csv or parquet")
	fl.StringVar(&f.output, "output", "", "write the events to this file (default standard output; parquet needs one)")
	fl.StringVar(&f.bucket, "bucket", "", "summarise --fields in UTC time buckets of this length (1m, 1h, 1d) or calendar unit (1w, week:monday, 1mo, quarter) instead of printing events")
	fl.StringVar(&f.fns, "fn", "count", "with --bucket: comma-separated functions: count, sum, min, max, avg, first, last, count_distinct, p50, p90, p99 (or any pN), median, stddev, delta, rate")
	fl.BoolVar(&f.fill, "fill", false, "with --bucket: print empty buckets too")
	fl.StringVar(&f.groupBy, "group-by", "", "with --bucket: summarise each series (series) or each string value of a field apart, one row a group and bucket")
	fl.String("tenant", "", "tenant (default $"+EnvTenant+"; with --server, the API key's)")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

// runQuery checks the flags, runs the query page by page and prints it.
func runQuery(cmd *cobra.Command, g *globals, f queryFlags) (err error) {
	if err := f.check(cmd); err != nil {
		return err
	}
	if f.bucket != "" {
		return runAggregate(cmd, g, f)
	}
	clk, err := g.clock()
	if err != nil {
		return err
	}
	q, err := f.query(clk.Now())
	if err != nil {
		return err
	}
	if err := checkFormat(f.format, "table", "json", "ndjson", "csv", "parquet"); err != nil {
		return err
	}
	if f.format == "parquet" && f.output == "" {
		return usageErrorf("--format parquet writes a binary file: name it with --output FILE")
	}
	ctx := cmd.Context()
	src, err := g.openEvents(cmd, f)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.close()) }()

	dst := cmd.OutOrStdout()
	var file *outputFile
	if f.output != "" {
		if file, err = createOutput(f.output); err != nil {
			return err
		}
		// Removed unless committed below.
		defer func() {
			if err != nil {
				file.discard()
			}
		}()
		dst = file
	}
	out := bufio.NewWriterSize(dst, 1<<16)
	var p printer
	switch f.format {
	case "json":
		p = &jsonPrinter{w: out}
	case "ndjson":
		p = &ndjsonPrinter{w: out}
	case "parquet":
		pp := &parquetPrinter{w: out}
		defer pp.discard() // its spool, when the query fails
		p = pp
	case "csv":
		p = &csvPrinter{w: csv.NewWriter(out), fields: q.Fields}
	default:
		p = &tablePrinter{w: out, fields: q.Fields}
	}
	// A progress bar when the events go elsewhere than the terminal it
	// is drawn on.
	if stderr := cmd.ErrOrStderr(); file != nil || !isTerminal(cmd.OutOrStdout()) {
		if bar := newItemProgress(stderr, int64(cmp.Or(f.limit, -1)), "exporting"); bar != nil {
			p = progressPrinter{printer: p, bar: bar}
		}
	}
	maxPage := src.maxPage
	cut := false
	for remaining := f.limit; ; {
		q.Limit = maxPage
		if f.limit > 0 {
			q.Limit = min(remaining, maxPage)
		}
		page, err := src.page(ctx, q)
		if err != nil {
			return err
		}
		remaining -= len(page.Events)
		last := page.NextCursor == "" || f.limit > 0 && remaining <= 0
		if err := p.add(page.Events, last); err != nil {
			return err
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
		if f.limit > 0 && remaining <= 0 {
			// The limit is reached: is there more to say so?
			q.Limit = 1
			more, err := src.page(ctx, q)
			if err != nil {
				return err
			}
			cut = len(more.Events) > 0
			break
		}
	}
	if err := p.end(); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if file != nil {
		if err := file.commit(); err != nil {
			return err
		}
	}
	if cut {
		fmt.Fprintf(cmd.ErrOrStderr(), "stopped at --limit %d: the range holds more events (raise --limit, or leave it out for all)\n", f.limit)
	}
	return nil
}

// pageSource is where query reads the pages of its answer: the server
// --server names, or the store.
type pageSource[Q, P any] struct {
	// page returns the page of the answer that q asks for.
	page func(ctx context.Context, q Q) (P, error)
	// maxPage is the most events a page of events may hold.
	maxPage int
	close   func() error
}

// openSource opens where query reads (openRead): a server's pages through
// remote, or else the store's, read-only, for the tenant the flags name,
// through local.
func openSource[Q, P any](g *globals, cmd *cobra.Command, remote func(*remote) func(context.Context, Q) (P, error), local func(s *session, tenant string) func(context.Context, Q) (P, error)) (pageSource[Q, P], error) {
	r, s, tenant, err := g.openRead(cmd)
	if err != nil {
		return pageSource[Q, P]{}, err
	}
	if r != nil {
		return pageSource[Q, P]{page: remote(r), maxPage: engine.DefaultMaxLimit, close: func() error { return nil }}, nil
	}
	return pageSource[Q, P]{page: local(s, tenant), maxPage: s.db.Options().MaxLimit, close: s.Close}, nil
}

// openEvents returns the source of the events of a query: the server
// --server names, or the store.
func (g *globals) openEvents(cmd *cobra.Command, f queryFlags) (pageSource[engine.Query, engine.Page], error) {
	return openSource(g, cmd,
		func(r *remote) func(context.Context, engine.Query) (engine.Page, error) {
			return func(ctx context.Context, q engine.Query) (engine.Page, error) {
				return r.events(ctx, q.Table, f.apiQuery(q))
			}
		},
		func(s *session, tenant string) func(context.Context, engine.Query) (engine.Page, error) {
			return func(ctx context.Context, q engine.Query) (engine.Page, error) {
				return s.db.Query(ctx, tenant, q)
			}
		})
}

// apiQuery returns the HTTP API's query of the page q of the query the
// flags ask, its filter as the flag gives it.
func (f queryFlags) apiQuery(q engine.Query) api.Query {
	return api.Query{From: q.From, To: q.To, Series: q.Series, Desc: q.Desc, Limit: q.Limit, Cursor: q.Cursor, Fields: q.Fields, Filter: f.filter}
}

// openRead opens what query reads from: the server --server names (r),
// or else the store, read-only, with the tenant the flags name (s and
// tenant; the caller closes s). A query of a server takes its tenant
// from the API key, so --tenant is refused with --server.
func (g *globals) openRead(cmd *cobra.Command) (r *remote, s *session, tenant string, err error) {
	r, err = g.remote(apiKeyCredential)
	if err != nil {
		return nil, nil, "", err
	}
	if r != nil {
		if err := noTenantFlag(cmd); err != nil {
			return nil, nil, "", err
		}
		return r, nil, "", nil
	}
	tenant, err = tenantName(cmd.Flags())
	if err != nil {
		return nil, nil, "", err
	}
	ctx := cmd.Context()
	s, err = g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn, existing: true, readOnly: true})
	if err != nil {
		return nil, nil, "", err
	}
	if err := s.tenant(ctx, tenant); err != nil {
		return nil, nil, "", errors.Join(err, s.Close())
	}
	return nil, s, tenant, nil
}

// check refuses flags that do not apply to what the command was asked:
// --fn, --fill and --group-by summarise buckets, which only --bucket asks for, and
// buckets come in time order, so --order is for events only.
func (f queryFlags) check(cmd *cobra.Command) error {
	if f.limit < 0 {
		return usageErrorf("--limit %d: use a positive number, or leave it out for every event", f.limit)
	}
	changed := cmd.Flags().Changed
	if f.bucket == "" {
		for _, name := range []string{"fn", "fill", "group-by"} {
			if changed(name) {
				return usageErrorf("--%s applies to aggregates: add --bucket, or leave --%s out", name, name)
			}
		}
		return nil
	}
	for _, name := range []string{"order", "limit", "output"} {
		if changed(name) {
			return usageErrorf("--%s applies to events, not to --bucket aggregates (buckets come oldest first, every one)", name)
		}
	}
	return nil
}

// query checks the flags and returns the engine query they describe. now
// is the clock's time, which relative times (--from now-1h) count from.
// As the HTTP API does, --to defaults to now and --from to
// server.DefaultQueryRange (24 hours) before --to.
func (f queryFlags) query(now time.Time) (engine.Query, error) {
	q := engine.Query{Table: f.table, Series: f.series}
	var err error
	q.To = now.UTC()
	if f.to != "" {
		if q.To, err = event.ParseTimeAt(f.to, now); err != nil {
			return q, usageErrorf("--to: %q is neither RFC 3339, Unix milliseconds nor now, now-1h, now-7d", f.to)
		}
	}
	if q.From = q.To.Add(-server.DefaultQueryRange); q.From.Before(time.Unix(0, 0)) {
		q.From = time.Unix(0, 0).UTC()
	}
	if f.from != "" {
		if q.From, err = event.ParseTimeAt(f.from, now); err != nil {
			return q, usageErrorf("--from: %q is neither RFC 3339, Unix milliseconds nor now, now-1h, now-7d", f.from)
		}
	}
	if q.From.After(q.To) {
		return q, usageErrorf("--from %s is after --to %s", q.From.Format(time.RFC3339Nano), q.To.Format(time.RFC3339Nano))
	}
	switch f.order {
	case "asc":
	case "desc":
		q.Desc = true
	default:
		return q, usageErrorf("--order %q: use asc or desc", f.order)
	}
	if f.limit < 0 {
		return q, usageErrorf("--limit %d: use a positive number, or 0 for all", f.limit)
	}
	if f.fields != "" {
		q.Fields = strings.Split(f.fields, ",")
		if slices.Contains(q.Fields, "") {
			return q, usageErrorf("--fields %q: an empty field name", f.fields)
		}
	}
	if strings.TrimSpace(f.filter) != "" {
		if q.Filter, err = filter.Parse(f.filter); err != nil {
			return q, usageErrorf("--%v", err)
		}
	}
	return q, nil
}

// printer prints the events of a query, page by page; last is true for
// the last page.
type printer interface {
	add(events []event.Event, last bool) error
	end() error
}

// jsonPrinter prints a JSON array of events, one a line, as it gets them.
type jsonPrinter struct {
	w     *bufio.Writer
	count int
	buf   []byte
}

func (p *jsonPrinter) add(events []event.Event, _ bool) error {
	for _, e := range events {
		sep := ",\n"
		if p.count == 0 {
			sep = "[\n"
		}
		p.count++
		var err error
		if p.buf, err = e.AppendJSON(append(p.buf[:0], sep...)); err != nil {
			return err
		}
		if _, err := p.w.Write(p.buf); err != nil {
			return err
		}
	}
	return nil
}

func (p *jsonPrinter) end() error {
	if p.count == 0 {
		_, err := p.w.WriteString("[]\n")
		return err
	}
	_, err := p.w.WriteString("\n]\n")
	return err
}

// tablePrinter prints events as an aligned table: time, series, id, then
// one column per field. It keeps the events until end, to know every
// field's column and width.
type tablePrinter struct {
	w      *bufio.Writer
	fields []string // the columns; every field seen when empty
	events []event.Event
}

func (p *tablePrinter) add(events []event.Event, _ bool) error {
	p.events = append(p.events, events...)
	return nil
}

func (p *tablePrinter) end() error {
	fields := p.fields
	if len(fields) == 0 {
		fields = fieldsOf(p.events)
	}
	return p.writeTable(fields)
}

// fieldsOf returns the names of the events' fields, sorted.
func fieldsOf(events []event.Event) []string {
	seen := map[string]bool{}
	var fields []string
	for _, e := range events {
		for k := range e.Fields {
			if !seen[k] {
				seen[k] = true
				fields = append(fields, k)
			}
		}
	}
	slices.Sort(fields)
	return fields
}

// csvPrinter prints events as CSV, page by page: time, series, id, then
// one column per field: the fields asked for, or else those of the first
// page. When the first page is not the last, a last column, fields_json,
// holds as a JSON object the fields of an event that have no column.
type csvPrinter struct {
	w      *csv.Writer
	fields []string // the columns; learnt from the first page when empty
	other  bool     // whether the fields_json column is there
	row    []string
	begun  bool
}

func (p *csvPrinter) add(events []event.Event, last bool) error {
	if !p.begun {
		p.begin(events, last)
	}
	for _, e := range events {
		p.row = append(p.row[:0], e.Time.UTC().Format(time.RFC3339Nano), e.Series, e.ID)
		for _, name := range p.fields {
			v, ok := e.Fields[name]
			cell := ""
			if ok && v != nil {
				cell = cellText(v)
			}
			p.row = append(p.row, cell)
		}
		if p.other {
			p.row = append(p.row, otherFields(e.Fields, p.fields))
		}
		if err := p.w.Write(p.row); err != nil {
			return err
		}
	}
	return p.w.Error()
}

// begin writes the header, from the first page.
func (p *csvPrinter) begin(first []event.Event, last bool) {
	p.begun = true
	if len(p.fields) == 0 {
		p.fields = fieldsOf(first)
		p.other = !last
	}
	header := append([]string{"time", "series", "id"}, p.fields...)
	if p.other {
		header = append(header, parquetfile.ColFieldsJSON)
	}
	_ = p.w.Write(header)
}

func (p *csvPrinter) end() error {
	if !p.begun {
		p.begin(nil, true)
	}
	p.w.Flush()
	return p.w.Error()
}

// otherFields returns, as a JSON object, the fields not among columns;
// "" when there are none.
func otherFields(fields map[string]any, columns []string) string {
	var other map[string]any
	for k, v := range fields {
		if _, found := slices.BinarySearch(columns, k); !found {
			if other == nil {
				other = map[string]any{}
			}
			other[k] = v
		}
	}
	if other == nil {
		return ""
	}
	return jsonText(other)
}

func (p *tablePrinter) writeTable(fields []string) error {
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	header := []string{"TIME", "SERIES", "ID"}
	fmt.Fprintln(tw, strings.Join(append(header, fields...), "\t"))
	for _, e := range p.events {
		row := []string{e.Time.UTC().Format(time.RFC3339Nano), orDash(e.Series), e.ID}
		for _, name := range fields {
			v, ok := e.Fields[name]
			cell := "-"
			switch {
			case ok && v == nil:
				cell = "null"
			case ok:
				cell = cellText(v)
				// A tab or a line break would break the columns.
				if strings.ContainsAny(cell, "\t\n\r") || cell == "" {
					cell = jsonText(cell)
				}
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// cellText is a field value as a table or CSV cell: strings as they are,
// numbers and booleans as in JSON, objects and arrays as compact JSON.
func cellText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return jsonText(v)
}

// jsonText is v in JSON.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
