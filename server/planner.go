package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/planner"
	"github.com/timetabledb/timetable/planner/chart"
	"github.com/timetabledb/timetable/storage"
)

// Bounds of the planner's parameters: a billion events a second, and a
// billion series.
const (
	maxPlannerRate   = 1e9
	maxPlannerSeries = 1e9
)

// capacityPlan answers GET /v1/admin/planner: the capacity planner's
// report for a workload (as `timetable plan --format json` prints it)
// and its cost chart, an SVG document, for the console. rate is events a
// second; item_bytes the stored size of one (180 by default, the AWS
// guide's); peak, retention (a duration, 0 to keep data forever) and
// series are optional.
func (s *Server) capacityPlan(w http.ResponseWriter, r *http.Request) error {
	params := r.URL.Query()
	if err := checkParams(params, "rate", "item_bytes", "peak", "retention", "series"); err != nil {
		return err
	}
	in := planner.Input{ItemBytes: 180}
	number := func(name string, into *float64, most float64) error {
		v := params.Get(name)
		if v == "" {
			return nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= most) { // NaN fails both
			return fmt.Errorf("%w: %s: %q is not a number from 0 to %g", ErrBadParameter, name, v, most)
		}
		*into = f
		return nil
	}
	var item, series float64
	for _, p := range []struct {
		name string
		into *float64
		most float64
	}{
		// Bounds far past any workload, so that the planner's
		// arithmetic stays finite and within int.
		{"rate", &in.Rate, maxPlannerRate}, {"peak", &in.Peak, maxPlannerRate},
		{"item_bytes", &item, storage.MaxItemSize}, {"series", &series, maxPlannerSeries},
	} {
		if err := number(p.name, p.into, p.most); err != nil {
			return err
		}
	}
	if item > 0 {
		in.ItemBytes = int(item)
	}
	in.Series = int(series)
	if v := params.Get("retention"); v != "" {
		d, err := period.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%w: retention: %v", ErrBadParameter, err)
		}
		in.Retention = d
	}
	rep, err := planner.Plan(in)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadParameter, err)
	}
	var svg bytes.Buffer
	if err := chart.WriteSVG(&svg, rep); err != nil {
		return fmt.Errorf("draw the plan: %w", err)
	}
	report, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encode the plan: %w", err)
	}
	writeJSON(w, http.StatusOK, api.Planner{Report: report, SVG: svg.String()})
	return nil
}
