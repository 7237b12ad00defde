// Package console is timetable's web console: plain HTML, CSS and
// JavaScript, embedded in the binary and served by the server at "/" (no
// build step, no CDN, nothing fetched from elsewhere).
//
// It talks to the server's own API with the key the user signs in with:
// an API key opens the tenant view (logical tables, series search, a
// chart of fields with time and value axes, the events with paging), the
// admin token the operator view (the server's key metrics from /metrics,
// tenants and their keys, archived tables, the families' physical tables
// by period and write month coloured by tier, their capacity and items
// where the store has them,
// the lifecycle's last cycle and its plan, the capacity planner). The key
// is kept in the page's memory only. docs/console.md describes it.
//
// Decisions:
//
//   - A chart is an aggregate by default, of the whole range, with the
//     function chosen and the bucket chosen or, when auto, the range over
//     450 points rounded up to a step of Grafana's kind (1s … 1d): so
//     the newest event of the range is always in the chart, and a chart
//     costs the same for a year as for a day. Raw mode reads the events
//     newest first, 5,000 a page, and says which of how many it shows.
//   - Every series is an aggregate grouped by series (one page of 1,000
//     groups): the top N by value or by events are a line each, with a
//     legend; the rest are one grey line where the function merges
//     across series (min, max, sum, count, avg from sums and counts),
//     else only counted. 300 lines of one colour say nothing.
//   - The view (not the key) is kept in the URL's hash, so a link
//     reopens it after signing in.
//   - The operator view shows DynamoDB's columns (billing, capacity,
//     throttles) only when /v1/admin/tables says the store is DynamoDB.
//   - The chart is SVG drawn by hand (axes, round ticks, lines, a
//     tooltip): no chart library and no build step.
//   - An error replaces the chart and its caption: a chart left from
//     before would be read as the answer.
//   - Series are searched by prefix on the server, 100 a page, so a table
//     of 100,000 series is as quick to browse as one of ten; the tables'
//     timeline draws each family's grid once, in one string.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Handler serves the console: index.html at "/" and the other assets
// under Prefix.
func Handler() http.Handler {
	sub, _ := fs.Sub(assets, "assets") // the embedded folder exists
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.URL.Path == "/" {
			http.ServeFileFS(w, r, sub, "index.html")
			return
		}
		http.StripPrefix(Prefix, files).ServeHTTP(w, r)
	})
}

// Prefix is where the console's assets are served.
const Prefix = "/console/"
