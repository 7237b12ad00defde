package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/planner"
)

const day = 24 * time.Hour

// svgLine is one polyline of a chart: its title and number of points.
type svgLine struct {
	Title  string
	Points int
}

// svgLines parses an SVG document fully, failing the test if it is not
// well-formed XML with an svg root, and returns its polylines by id.
func svgLines(t *testing.T, doc []byte) map[string]svgLine {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	lines := map[string]svgLine{}
	root, id := "", ""
	inTitle := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			if tok.Name.Local == "polyline" {
				var l svgLine
				for _, a := range tok.Attr {
					switch a.Name.Local {
					case "id":
						id = a.Value
					case "points":
						l.Points = len(strings.Fields(a.Value))
					}
				}
				lines[id] = l
			}
			inTitle = tok.Name.Local == "title" && id != ""
		case xml.CharData:
			if inTitle {
				l := lines[id]
				l.Title = string(tok)
				lines[id] = l
			}
		case xml.EndElement:
			if tok.Name.Local == "polyline" {
				id = ""
			}
			inTitle = false
		}
	}
	require.Equal(t, "svg", root)
	return lines
}

func TestWriteSVG(t *testing.T) {
	for name, in := range map[string]planner.Input{
		"retention": {ItemBytes: 180, Rate: 600, Retention: 90 * day},
		"forever":   {ItemBytes: 180, Rate: 600},
		"one month": {ItemBytes: 180, Rate: 600, Horizon: 730 * 3600e9},
		"odd label": {ItemBytes: 180, Rate: 600, Prices: planner.Prices{Label: `a <b> & "c"`, Currency: "EUR", WCUHour: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := planner.Plan(in)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, WriteSVG(&buf, r))
			n := len(r.Timeline)
			require.Equal(t, map[string]svgLine{
				"stored":    {"stored GB", n},
				"tier-hot":  {"hot tier", n},
				"tier-warm": {"warm tier", n},
				"tier-cold": {"cold tier", n},
				"storage":   {"storage", n},
			}, svgLines(t, buf.Bytes()))
		})
	}
}
