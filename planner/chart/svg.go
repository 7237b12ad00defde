// Package chart draws a capacity plan (planner.Report) as an SVG chart:
// its stored data and its monthly cost per tier over time, for
// `timetable plan --svg` and the console's planner page.
package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/timetabledb/timetable/planner"
)

// The chart's geometry, in SVG user units.
const (
	svgWidth  = 860
	svgHeight = 540
	plotLeft  = 90
	plotRight = 640
	plotW     = plotRight - plotLeft
	panelH    = 170
	dataTop   = 70
	costTop   = 320
)

// svgSeries is one line of the chart.
type svgSeries struct {
	ID, Name, Color string
	Points          string
	Last            string
	LabelY          float64
}

// svgPanel is one of the chart's two panels.
type svgPanel struct {
	Title      string
	TitleY     float64
	TickY      float64
	Top        float64
	Bottom     float64
	MaxLabel   string
	Series     []svgSeries
	MonthTicks []svgTick
}

type svgTick struct {
	X, Y  float64
	Label string
}

var svgTemplate = template.Must(template.New("plan.svg").Funcs(template.FuncMap{"esc": xmlEscape}).Parse(`<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" font-family="sans-serif" font-size="12">
<title>{{esc .Title}}</title>
<rect width="100%" height="100%" fill="white"/>
<text x="{{.Left}}" y="24" font-size="15" font-weight="bold">{{esc .Title}}</text>
{{range .Panels}}<g class="panel">
<text x="{{$.Left}}" y="{{.TitleY}}" font-weight="bold">{{esc .Title}}</text>
<line x1="{{$.Left}}" y1="{{.Bottom}}" x2="{{$.Right}}" y2="{{.Bottom}}" stroke="#888"/>
<line x1="{{$.Left}}" y1="{{.Top}}" x2="{{$.Left}}" y2="{{.Bottom}}" stroke="#888"/>
<line x1="{{$.Left}}" y1="{{.Top}}" x2="{{$.Right}}" y2="{{.Top}}" stroke="#eee"/>
<text x="{{$.AxisX}}" y="{{.Top}}" text-anchor="end" dominant-baseline="middle">{{esc .MaxLabel}}</text>
<text x="{{$.AxisX}}" y="{{.Bottom}}" text-anchor="end" dominant-baseline="middle">0</text>
{{range .MonthTicks}}<text x="{{printf "%.1f" .X}}" y="{{.Y}}" text-anchor="middle" fill="#555">{{esc .Label}}</text>
{{end}}<text x="{{$.MonthX}}" y="{{.TickY}}" fill="#555">month</text>
{{range .Series}}<polyline id="{{.ID}}" class="series" fill="none" stroke="{{.Color}}" stroke-width="2" points="{{.Points}}"><title>{{esc .Name}}</title></polyline>
<text x="{{$.LegendX}}" y="{{printf "%.1f" .LabelY}}" fill="{{.Color}}" dominant-baseline="middle">{{esc .Name}}: {{esc .Last}}</text>
{{end}}</g>
{{end}}<text x="10" y="{{.FootY}}" fill="#555" font-size="10">{{esc .Footnote}}</text>
</svg>
`))

// WriteSVG draws the report's timeline as an SVG chart: stored data in GB
// over the retention window (or the horizon when data is kept forever) in
// one panel, and each tier's monthly capacity cost and the storage cost in
// another.
func WriteSVG(w io.Writer, r planner.Report) error {
	n := len(r.Timeline)
	x := func(i int) float64 {
		if n == 1 {
			return plotLeft
		}
		return plotLeft + float64(i)*plotW/float64(n-1)
	}
	line := func(top, bottom, maxV float64, values []float64) string {
		var b strings.Builder
		for i, v := range values {
			y := bottom
			if maxV > 0 {
				y = bottom - v/maxV*(bottom-top)
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", x(i), y)
		}
		return b.String()
	}
	ticks := func(bottom float64) []svgTick {
		var t []svgTick
		step := max(1, (n+11)/12)
		for i := 0; i < n; i += step {
			t = append(t, svgTick{X: x(i), Y: bottom + 16, Label: fmt.Sprint(r.Timeline[i].Month)})
		}
		return t
	}
	money := func(f float64) string { return planner.FormatMoney(f, r.Prices.Currency) }

	stored := make([]float64, n)
	maxStored := 0.0
	for i, m := range r.Timeline {
		stored[i] = m.StoredGB
		maxStored = max(maxStored, m.StoredGB)
	}
	dataBottom := float64(dataTop + panelH)
	data := svgPanel{
		Title: "Stored data (GB)", TitleY: dataTop - 10, TickY: dataTop + panelH + 16, Top: dataTop, Bottom: dataBottom,
		MaxLabel:   planner.FormatNumber(maxStored),
		MonthTicks: ticks(dataBottom),
		Series: []svgSeries{{
			ID: "stored", Name: "stored GB", Color: "#444",
			Points: line(dataTop, dataBottom, maxStored, stored),
			Last:   planner.FormatNumber(stored[n-1]), LabelY: dataTop + panelH/2,
		}},
	}

	colors := []string{"#d62728", "#ff7f0e", "#1f77b4", "#9467bd", "#8c564b"}
	type named struct {
		id, name string
		values   []float64
	}
	var costs []named
	for j, t := range r.Tiers {
		v := make([]float64, n)
		for i, m := range r.Timeline {
			v[i] = m.Tiers[j].Cost
		}
		costs = append(costs, named{"tier-" + t.Name, t.Name + " tier", v})
	}
	st := make([]float64, n)
	for i, m := range r.Timeline {
		st[i] = m.Storage
	}
	costs = append(costs, named{"storage", "storage", st})
	maxCost := 0.0
	for _, c := range costs {
		for _, v := range c.values {
			maxCost = max(maxCost, v)
		}
	}
	costBottom := float64(costTop + panelH)
	cost := svgPanel{Title: "Monthly cost, provisioned tiers (" + r.Prices.Currency + ")", TitleY: costTop - 10, TickY: costTop + panelH + 16, Top: costTop, Bottom: costBottom, MaxLabel: money(maxCost), MonthTicks: ticks(costBottom)}
	for j, c := range costs {
		color := "#2ca02c"
		if c.id != "storage" {
			color = colors[j%len(colors)]
		}
		cost.Series = append(cost.Series, svgSeries{
			ID: c.id, Name: c.name, Color: color,
			Points: line(costTop, costBottom, maxCost, c.values),
			Last:   money(c.values[n-1]),
			LabelY: costTop + 20 + float64(j)*22,
		})
	}

	window := "retention " + planner.FormatHours(r.Workload.RetentionHours)
	if r.Workload.RetentionHours == 0 {
		window = "kept forever, shown over " + planner.FormatHours(r.Workload.HorizonHours)
	}
	var buf bytes.Buffer
	err := svgTemplate.Execute(&buf, map[string]any{
		"Width": svgWidth, "Height": svgHeight, "Left": plotLeft, "Right": plotRight,
		"AxisX": plotLeft - 6, "LegendX": plotRight + 8, "MonthX": plotRight + 20, "FootY": svgHeight - 12,
		"Title":    fmt.Sprintf("timetable plan: %s tables, %s (%s)", r.Period, shards(r.Shards), window),
		"Panels":   []svgPanel{data, cost},
		"Footnote": "prices: " + r.Prices.Label,
	})
	if err != nil {
		return fmt.Errorf("draw plan: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// shards counts shards as the plan's table does: "1 shard", "6 shards".
func shards(n int) string {
	if n == 1 {
		return "1 shard"
	}
	return planner.FormatNumber(float64(n)) + " shards"
}

// xmlEscape escapes s for XML text and attribute values.
func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}
