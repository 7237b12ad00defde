package family_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
)

func TestDefaultSchemaIsValid(t *testing.T) {
	s := family.DefaultSchema()
	require.NoError(t, s.Validate())
	require.Equal(t, family.TablePolicy{
		Family: family.Default(),
		Layout: family.TableLayout{Kind: family.LayoutRow, WritePath: family.WritePathAuto, EventsPerItem: family.DefaultEventsPerItem},
	}, s.Policy("anything"))
}

func TestPolicy(t *testing.T) {
	wide := family.Default()
	wide.Name, wide.Prefix, wide.Layout = "wide", "tt_wide_", family.LayoutMap
	s := family.DefaultSchema()
	s.Families = append(s.Families, wide)
	s.Tables = map[string]family.Table{
		"a": {Family: "events", Layout: family.LayoutMap, WritePath: family.WritePathAppendFirst, EventsPerItem: 40, Rollups: true},
		"b": {Family: "wide"},
		"c": {Family: "wide", Layout: family.LayoutRow},
	}
	require.NoError(t, s.Validate())
	for table, want := range map[string]family.TablePolicy{
		"a":        {Family: family.Default(), Layout: family.TableLayout{Kind: family.LayoutMap, WritePath: family.WritePathAppendFirst, EventsPerItem: 40}, Rollups: true},
		"b":        {Family: wide, Layout: family.TableLayout{Kind: family.LayoutMap, WritePath: family.WritePathAuto, EventsPerItem: family.DefaultEventsPerItem}},
		"c":        {Family: wide, Layout: family.TableLayout{Kind: family.LayoutRow, WritePath: family.WritePathAuto, EventsPerItem: family.DefaultEventsPerItem}},
		"unlisted": {Family: family.Default(), Layout: family.TableLayout{Kind: family.LayoutRow, WritePath: family.WritePathAuto, EventsPerItem: family.DefaultEventsPerItem}},
	} {
		require.Equal(t, want, s.Policy(table), table)
		require.Equal(t, want.Family, s.Family(table), table)
		require.Equal(t, want.Layout, s.Layout(table), table)
	}
}

func TestInvalidSchemas(t *testing.T) {
	other := family.Default()
	other.Name = "other"
	for name, tc := range map[string]struct {
		edit func(*family.Schema)
		want string
	}{
		"bad family":     {func(s *family.Schema) { s.Families[0].Shards = 0 }, "shards"},
		"same prefix":    {func(s *family.Schema) { s.Families = append(s.Families, other) }, `families "events" and "other" have overlapping prefixes`},
		"no default":     {func(s *family.Schema) { s.DefaultFamily = "nope" }, `default_family "nope" is not defined`},
		"unknown family": {func(s *family.Schema) { s.Tables["t"] = family.Table{Family: "nope"} }, `table "t": family "nope" is not defined`},
		"bad layout":     {func(s *family.Schema) { s.Tables["t"] = family.Table{Family: "events", Layout: "grid"} }, `layout "grid" must be row or map`},
		"bad write path": {func(s *family.Schema) { s.Tables["t"] = family.Table{Family: "events", WritePath: "sideways"} }, "write_path"},
		"too many events": {func(s *family.Schema) {
			s.Tables["t"] = family.Table{Family: "events", EventsPerItem: family.MaxEventsPerItem + 1}
		}, "events_per_item"},
	} {
		t.Run(name, func(t *testing.T) {
			s := family.DefaultSchema()
			tc.edit(&s)
			require.ErrorContains(t, s.Validate(), tc.want)
		})
	}
}
