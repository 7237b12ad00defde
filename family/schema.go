package family

import (
	"fmt"
	"strings"
)

// Schema is what an engine is told of its tables: the families, which
// family each logical table goes to and how it lays out its events, and
// the meta table. It is the engine's own setting (engine.Options.Schema);
// the configuration file holds one beside the settings of the server, of
// MQTT and of the store (config.Config).
type Schema struct {
	// Families are the table families, the default one included.
	Families []Family
	// DefaultFamily names the family of logical tables not listed in
	// Tables.
	DefaultFamily string
	// Tables holds the settings of logical tables, by name; a table not
	// listed goes to DefaultFamily with its defaults.
	Tables map[string]Table
	// MetaTable is the table holding tenants, logical tables and the
	// table registry; empty means the engine's default.
	MetaTable string
}

// Table is the settings of one logical table (in any tenant).
type Table struct {
	// Family names the table's family; empty means the schema's default.
	Family string
	// Layout is the table's item layout; empty means its family's.
	Layout Layout
	// WritePath is how the map layout writes; empty means WritePathAuto.
	WritePath WritePath
	// EventsPerItem caps the events of one map-layout item; further
	// events of that millisecond go to continuation items. Zero means
	// DefaultEventsPerItem.
	EventsPerItem int
	// Rollups keeps exact hourly and daily rollups of the table, which
	// aggregate queries use; see package engine.
	Rollups bool
}

// WritePath is which conditional write the map layout tries first; the
// rule, and which to choose, are in docs/layouts.md.
type WritePath string

// Write paths of the map layout.
const (
	// WritePathAuto picks create-first or append-first per write, from
	// what the engine saw of the series.
	WritePathAuto WritePath = "auto"
	// WritePathCreateFirst tries a conditional create of the
	// millisecond's item first and appends when it exists: best when a
	// millisecond mostly holds one event.
	WritePathCreateFirst WritePath = "create_first"
	// WritePathAppendFirst tries an append to an existing item first and
	// creates it when missing: best when most events share their
	// millisecond with others.
	WritePathAppendFirst WritePath = "append_first"
)

// DefaultEventsPerItem is how many events a map-layout item holds before
// the next events of its millisecond go to a continuation item: Fineo's
// cap.
const DefaultEventsPerItem = 250

// MaxEventsPerItem bounds Table.EventsPerItem: more would only make the
// item hit DynamoDB's 400 KB limit first.
const MaxEventsPerItem = 100000

// TableLayout is the resolved layout of one logical table: the kind of
// items its events go into, and for the map layout how they are written.
type TableLayout struct {
	Kind          Layout
	WritePath     WritePath
	EventsPerItem int
}

// TablePolicy is everything a write or a read of one logical table needs
// of the schema, resolved once (Schema.Policy) and passed down: its
// family, its layout with the defaults filled in, and whether it keeps
// rollups.
type TablePolicy struct {
	Family  Family
	Layout  TableLayout
	Rollups bool
}

// DefaultSchema returns the schema of an engine told nothing: the default
// family (Default), named "events", for every logical table.
func DefaultSchema() Schema {
	return Schema{Families: []Family{Default()}, DefaultFamily: "events", Tables: map[string]Table{}}
}

// Validate reports what is wrong with a schema, if anything: an invalid
// family, families whose prefixes overlap, a family named but not
// defined, or a table's setting out of range. Its errors name the
// setting, as the configuration file spells it.
func (s Schema) Validate() error {
	families := map[string]Family{}
	for _, f := range s.Families {
		if err := f.Validate(); err != nil {
			return err
		}
		families[f.Name] = f
	}
	for _, f := range s.Families {
		for _, g := range s.Families {
			if f.Name != g.Name && (strings.HasPrefix(f.Prefix, g.Prefix) || strings.HasPrefix(g.Prefix, f.Prefix)) {
				return fmt.Errorf("families %q and %q have overlapping prefixes %q and %q", f.Name, g.Name, f.Prefix, g.Prefix)
			}
		}
	}
	if _, ok := families[s.DefaultFamily]; !ok {
		return fmt.Errorf("default_family %q is not defined", s.DefaultFamily)
	}
	for name, t := range s.Tables {
		if _, ok := families[t.Family]; !ok {
			return fmt.Errorf("table %q: family %q is not defined", name, t.Family)
		}
		switch t.Layout {
		case "", LayoutRow, LayoutMap:
		case LayoutChunk:
			// The chunk layout is a fact of each physical table, which
			// the logical tables of a family share: its family sets it.
			return fmt.Errorf("table %q: layout chunk is set on its family (families: layout: chunk), whose tables record it", name)
		default:
			return fmt.Errorf("table %q: layout %q must be row or map", name, t.Layout)
		}
		switch t.WritePath {
		case "", WritePathAuto, WritePathCreateFirst, WritePathAppendFirst:
		default:
			return fmt.Errorf("table %q: write_path %q must be auto, create_first or append_first", name, t.WritePath)
		}
		if t.EventsPerItem < 0 || t.EventsPerItem > MaxEventsPerItem {
			return fmt.Errorf("table %q: events_per_item %d must be between 1 and %d", name, t.EventsPerItem, MaxEventsPerItem)
		}
	}
	return nil
}

// Family returns the family a logical table goes to.
func (s Schema) Family(table string) Family {
	name := s.DefaultFamily
	if t, ok := s.Tables[table]; ok && t.Family != "" {
		name = t.Family
	}
	for _, f := range s.Families {
		if f.Name == name {
			return f
		}
	}
	return s.Families[0]
}

// Layout returns how a logical table lays out its events: its own
// settings, else its family's layout, with the defaults filled in.
func (s Schema) Layout(table string) TableLayout {
	return s.Policy(table).Layout
}

// Policy resolves the settings of a logical table once: its family, its
// layout (its own settings, else its family's, with the defaults filled
// in) and its rollups.
func (s Schema) Policy(table string) TablePolicy {
	f := s.Family(table)
	t := s.Tables[table]
	l := TableLayout{Kind: t.Layout, WritePath: t.WritePath, EventsPerItem: t.EventsPerItem}
	if l.Kind == "" {
		l.Kind = f.Layout
	}
	if l.Kind == "" {
		l.Kind = LayoutRow
	}
	if l.WritePath == "" {
		l.WritePath = WritePathAuto
	}
	if l.EventsPerItem == 0 {
		l.EventsPerItem = DefaultEventsPerItem
	}
	return TablePolicy{Family: f, Layout: l, Rollups: t.Rollups}
}
