package server_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/server"
)

func TestAggregate(t *testing.T) {
	f := newFixture(t, server.Options{})
	at := now.Add(-3 * time.Hour).Truncate(time.Hour)
	res := f.postJSON(f.acme, "cars", `[
		{"time": "`+at.Add(10*time.Minute).Format(time.RFC3339)+`", "series": "a", "fields": {"speed": 10, "gear": "D"}},
		{"time": "`+at.Add(20*time.Minute).Format(time.RFC3339)+`", "series": "b", "fields": {"speed": 30, "gear": "N"}},
		{"time": "`+at.Add(2*time.Hour).Format(time.RFC3339)+`", "series": "a", "fields": {"speed": 5}}]`)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)

	get := func(params url.Values) response {
		return f.do("GET", "/v1/tables/cars/aggregate?"+params.Encode(), f.acme, nil)
	}
	params := rangeParams(at, at.Add(3*time.Hour-time.Second))
	params.Set("bucket", "1h")
	params.Set("fields", "speed")
	params.Set("fn", "count,sum,avg,min,max")
	res = get(params)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	buckets := res.json(t)["buckets"].([]any)
	require.Len(t, buckets, 2)
	first := buckets[0].(map[string]any)
	require.Equal(t, at.Format(time.RFC3339), first["start"])
	require.Equal(t, float64(2), first["events"])
	require.Equal(t, map[string]any{"count": 2.0, "sum": 40.0, "avg": 20.0, "min": 10.0, "max": 30.0}, first["values"].(map[string]any)["speed"])

	// A calendar month: one bucket, cut to the range.
	params.Set("bucket", "1mo")
	res = get(params)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	buckets = res.json(t)["buckets"].([]any)
	require.Len(t, buckets, 1)
	require.Equal(t, float64(3), buckets[0].(map[string]any)["events"])
	require.Equal(t, true, buckets[0].(map[string]any)["partial"])

	params.Set("bucket", "1h")
	params.Set("fill", "true")
	params.Set("series", "a")
	res = get(params)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	buckets = res.json(t)["buckets"].([]any)
	require.Len(t, buckets, 3, "empty buckets filled")
	require.Equal(t, map[string]any{}, buckets[1].(map[string]any)["values"])

	for name, tc := range map[string]struct{ set, value, want string }{
		"unknown function":    {"fn", "mode", `unknown function \"mode\"`},
		"bucket not dividing": {"bucket", "7m", "does not divide a day"},
		"bucket too short":    {"bucket", "10ms", "shorter than the shortest allowed"},
		"bad bucket":          {"bucket", "hourly", "bucket"},
		"week as a duration":  {"bucket", "7d", "longer than a day: use calendar buckets for weeks (1w) and months (1mo)"},
		"non-numeric sum":     {"fields", "gear", "not a number"},
		"bad fill":            {"fill", "maybe", "fill"},
		"unknown parameter":   {"limit", "3", `unknown parameter \"limit\"`},
	} {
		t.Run(name, func(t *testing.T) {
			p := url.Values{}
			for k, v := range params {
				p[k] = v
			}
			p.Set(tc.set, tc.value)
			res := get(p)
			require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
			require.Contains(t, string(res.body), tc.want)
		})
	}
	// fn=count alone needs no fields: it counts events.
	counted := cloneValues(params)
	counted.Del("fields")
	counted.Set("fn", "count")
	res = get(counted)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.Equal(t, float64(1), res.json(t)["buckets"].([]any)[0].(map[string]any)["events"], "series a's first hour")
	counted.Set("fn", "count,sum")
	res = get(counted)
	require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
	require.Contains(t, string(res.body), "fields: required")
	res = f.do("GET", "/v1/tables/nope/aggregate?"+params.Encode(), f.acme, nil)
	require.Equal(t, http.StatusNotFound, res.status)
	res = f.do("GET", "/v1/tables/cars/aggregate?"+params.Encode(), "tt_wrong", nil)
	require.Equal(t, http.StatusUnauthorized, res.status)
}

func TestAggregateGroupsAndSketches(t *testing.T) {
	f := newFixture(t, server.Options{})
	at := now.Add(-3 * time.Hour).Truncate(time.Hour)
	res := f.postJSON(f.acme, "cars", `[
		{"time": "`+at.Add(10*time.Minute).Format(time.RFC3339)+`", "series": "a", "fields": {"speed": 10, "gear": "D", "odo": 100}},
		{"time": "`+at.Add(20*time.Minute).Format(time.RFC3339)+`", "series": "b", "fields": {"speed": 30, "gear": "N", "odo": 7}},
		{"time": "`+at.Add(30*time.Minute).Format(time.RFC3339)+`", "series": "a", "fields": {"speed": 20, "gear": "D", "odo": 130}},
		{"time": "`+at.Add(40*time.Minute).Format(time.RFC3339)+`", "series": "c", "fields": {"speed": 40, "gear": "R", "odo": 1}}]`)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	get := func(params url.Values) response {
		return f.do("GET", "/v1/tables/cars/aggregate?"+params.Encode(), f.acme, nil)
	}
	params := rangeParams(at, at.Add(time.Hour-time.Nanosecond))
	params.Set("bucket", "1h")
	params.Set("fields", "speed,odo")
	params.Set("fn", "count,p50,delta")
	params.Set("group_by", "series")
	params.Set("group_limit", "2")
	res = get(params)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	body := res.json(t)
	require.Equal(t, "b", body["next_group"])
	groups := body["groups"].([]any)
	require.Len(t, groups, 2)
	a := groups[0].(map[string]any)
	require.Equal(t, "a", a["group"])
	values := a["buckets"].([]any)[0].(map[string]any)["values"].(map[string]any)
	odo := values["odo"].(map[string]any)
	require.Equal(t, 2.0, odo["count"])
	require.Equal(t, 30.0, odo["delta"], "odo rose by 30 in series a")
	require.Equal(t, 100.0, odo["p50"], "the lower of 100 and 130, exactly: nearest rank of two values")
	require.Equal(t, 2.0, values["speed"].(map[string]any)["count"])

	params.Set("group_after", "b")
	res = get(params)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	body = res.json(t)
	require.NotContains(t, body, "next_group")
	require.Len(t, body["groups"].([]any), 1)

	params.Del("group_after")
	params.Del("group_limit")
	params.Set("group_by", "gear")
	params.Set("fields", "speed")
	params.Set("fn", "count_distinct,count")
	res = get(params)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var gears []string
	for _, g := range res.json(t)["groups"].([]any) {
		gears = append(gears, g.(map[string]any)["group"].(string))
	}
	require.Equal(t, []string{"D", "N", "R"}, gears)

	for name, tc := range map[string]struct{ set, value, want string }{
		"group limit zero":      {"group_limit", "0", "group_limit"},
		"group limit too large": {"group_limit", "5000", "group_limit"},
		"percentile of strings": {"fields", "gear", "not a number"},
	} {
		t.Run(name, func(t *testing.T) {
			p := cloneValues(params)
			p.Set("fn", "p99")
			p.Set(tc.set, tc.value)
			res := get(p)
			require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
			require.Contains(t, string(res.body), tc.want)
		})
	}
}

// TestAggregateGaps deletes the table of a week behind timetable's back
// (its registry entry says missing): an aggregate over that week answers
// its buckets without it and names the gap, as a page of events does,
// instead of reading as a week without events.
func TestAggregateGaps(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, server.Options{})
	old := now.Add(-30 * 24 * time.Hour).Truncate(24 * time.Hour)
	res := f.postJSON(f.acme, "cars", `[
		{"time": "`+old.Add(10*time.Minute).Format(time.RFC3339)+`", "series": "a", "fields": {"speed": 10}},
		{"time": "`+now.Add(-time.Hour).Format(time.RFC3339)+`", "series": "a", "fields": {"speed": 20}}]`)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	params := rangeParams(old, now)
	params.Set("bucket", "1d")
	params.Set("fields", "speed")
	params.Set("fn", "count")
	get := func() response {
		return f.do("GET", "/v1/tables/cars/aggregate?"+params.Encode(), f.acme, nil)
	}
	res = get()
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.NotContains(t, res.json(t), "gaps")
	require.Empty(t, res.header.Get("Timetable-Gaps"))
	require.Len(t, res.json(t)["buckets"].([]any), 2)

	meta := f.db.Options().Schema.MetaTable
	if meta == "" {
		meta = engine.DefaultMetaTable
	}
	reg := registry.New(f.store, meta)
	fam := f.db.Options().Schema.Families[0]
	entries, err := reg.Overlapping(ctx, fam.Name, old, old.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	e := entries[0]
	require.NoError(t, backends.Drop(ctx, f.store, e.Name))
	e.State = registry.Missing
	_, err = reg.Save(ctx, e)
	require.NoError(t, err)
	f.clock.Advance(time.Hour) // past the engine's cached routes

	for _, group := range []string{"", "series"} {
		if group != "" {
			params.Set("group_by", group)
		}
		res = get()
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		require.Equal(t, "1", res.header.Get("Timetable-Gaps"))
		gaps := res.json(t)["gaps"].([]any)
		require.Len(t, gaps, 1)
		g := gaps[0].(map[string]any)
		require.Equal(t, e.Name, g["table"])
		require.NotEmpty(t, g["reason"])
		from, err := time.Parse(time.RFC3339, g["from"].(string))
		require.NoError(t, err)
		require.False(t, from.After(old), "the gap covers the deleted week's part of the range")
	}
	// The events page names the same gap.
	res = f.do("GET", "/v1/tables/cars/events?"+rangeParams(old, now).Encode(), f.acme, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.Equal(t, "1", res.header.Get("Timetable-Gaps"))
}
