package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
)

// runAggregate runs `timetable query --bucket`: the fields summarised in
// time buckets, one row a bucket, one column a field and function; with
// --group-by, one row a group and bucket, every page of groups.
func runAggregate(cmd *cobra.Command, g *globals, f queryFlags) (err error) {
	clk, err := g.clock()
	if err != nil {
		return err
	}
	rq, err := f.query(clk.Now())
	if err != nil {
		return err
	}
	if err := checkFormat(f.format, "table", "json", "csv"); err != nil {
		return err
	}
	q := engine.AggregateQuery{Table: rq.Table, Series: rq.Series, From: rq.From, To: rq.To, Fields: rq.Fields, Filter: rq.Filter, Fill: f.fill}
	if q.Bucket, q.Calendar, err = engine.ParseBucket(f.bucket); err != nil {
		return usageErrorf("--%v", err)
	}
	q.Funcs = strings.Split(f.fns, ",")
	if slices.Contains(q.Funcs, "") {
		return usageErrorf("--fn %q: an empty function name", f.fns)
	}
	if len(q.Fields) == 0 && slices.ContainsFunc(q.Funcs, func(fn string) bool { return fn != engine.FnCount }) {
		return usageErrorf("--bucket needs --fields, the fields to summarise (--fn count alone counts events and needs none)")
	}
	q.GroupBy = f.groupBy
	ctx := cmd.Context()
	src, err := g.openAggregates(cmd, f)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.close()) }()
	var groups []engine.Group
	for {
		page, err := src.page(ctx, q)
		if err != nil {
			return err
		}
		groups = append(groups, page.Groups...)
		if page.Next == nil {
			break
		}
		q.GroupAfter = page.Next
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		for i := range groups {
			if groups[i].Buckets == nil {
				groups[i].Buckets = []engine.Bucket{}
			}
		}
		var v any = groups
		switch {
		case f.groupBy == "":
			v = groups[0].Buckets
		case groups == nil:
			v = []engine.Group{}
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
		return out.Flush()
	}
	header := []string{"start", "events"}
	if f.groupBy != "" {
		header = append([]string{"group"}, header...)
	}
	for _, field := range q.Fields {
		for _, fn := range q.Funcs {
			header = append(header, field+"."+fn)
		}
	}
	var cells [][]string
	for _, g := range groups {
		for _, b := range g.Buckets {
			row := []string{b.Start.Format(time.RFC3339Nano), fmt.Sprint(b.Events)}
			if f.groupBy != "" {
				row = append([]string{g.Key}, row...)
			}
			for _, field := range q.Fields {
				for _, fn := range q.Funcs {
					cell := ""
					if v, ok := b.Values[field][fn]; ok {
						cell = cellText(v)
						if f.format != "csv" {
							cell = roundedCell(fn, v, cell)
						}
					}
					row = append(row, cell)
				}
			}
			cells = append(cells, row)
		}
	}
	if f.format == "csv" {
		w := csv.NewWriter(out)
		_ = w.Write(header)
		_ = w.WriteAll(cells)
		if err := w.Error(); err != nil {
			return err
		}
		return out.Flush()
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
	for _, row := range cells {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}

// openAggregates returns the source of the aggregate of a query: the
// server --server names, or the store. A page is the buckets of q as one
// group without a key, or a page of its groups when it is grouped.
func (g *globals) openAggregates(cmd *cobra.Command, f queryFlags) (pageSource[engine.AggregateQuery, engine.GroupPage], error) {
	return openSource(g, cmd,
		func(r *remote) func(context.Context, engine.AggregateQuery) (engine.GroupPage, error) {
			return func(ctx context.Context, q engine.AggregateQuery) (engine.GroupPage, error) {
				return r.aggregate(ctx, q.Table, f.apiAggregate(q))
			}
		},
		func(s *session, tenant string) func(context.Context, engine.AggregateQuery) (engine.GroupPage, error) {
			return func(ctx context.Context, q engine.AggregateQuery) (engine.GroupPage, error) {
				if q.GroupBy == "" {
					buckets, err := s.db.Aggregate(ctx, tenant, q)
					return engine.GroupPage{Groups: []engine.Group{{Buckets: buckets}}}, err
				}
				return s.db.AggregateGroups(ctx, tenant, q)
			}
		})
}

// apiAggregate returns the HTTP API's query of the aggregate q the flags
// ask, its bucket, functions and filter as the flags give them.
func (f queryFlags) apiAggregate(q engine.AggregateQuery) api.AggregateQuery {
	return api.AggregateQuery{From: q.From, To: q.To, Series: f.series, Bucket: f.bucket, Fields: list(f.fields), Funcs: list(f.fns),
		Fill: f.fill, Filter: f.filter, GroupBy: f.groupBy, GroupAfter: q.GroupAfter}
}

// list returns the names of a comma-separated list, nil for "".
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// shownDigits is how many significant digits the table shows of a
// result that is a quotient, avg and rate: their JSON and CSV keep every
// digit the engine gives (up to engine.AvgDigits), which a reader at a
// terminal has no use for.
const shownDigits = 6

// roundedCell returns the cell of the result v of fn, text, rounded for
// the table: avg and rate to shownDigits significant digits, rounded half
// to even, but never fewer than their integer digits (an average of
// 1,234,567.8 shows as 1234568); other results as they are, exact.
func roundedCell(fn string, v any, text string) string {
	n, ok := v.(json.Number)
	if !ok || (fn != engine.FnAvg && fn != engine.FnRate) {
		return text
	}
	var d apd.Decimal
	if _, _, err := d.SetString(string(n)); err != nil || d.IsZero() {
		return text
	}
	digits := max(shownDigits, d.NumDigits()+int64(d.Exponent))
	c := apd.BaseContext.WithPrecision(uint32(digits))
	c.Rounding = apd.RoundHalfEven
	var r apd.Decimal
	if _, err := c.Round(&r, &d); err != nil {
		return text
	}
	r.Reduce(&r)
	return r.Text('f')
}
