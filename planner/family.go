package planner

import (
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Family is the recommended family as a configuration file spells it (see
// package config): what ApplyFamily writes.
type Family struct {
	Name              string `json:"name"`
	Prefix            string `json:"prefix"`
	Period            string `json:"period"`
	Naming            string `json:"naming"`
	WriteTimeGrouping string `json:"write_time_grouping"`
	Shards            int    `json:"shards"`
	Layout            string `json:"layout"`
	// ChunkWindow is the chunk layout's window; "" for rows.
	ChunkWindow string       `json:"chunk_window,omitempty"`
	Billing     string       `json:"billing"`
	Tiers       []FamilyTier `json:"tiers"`
	Prebuild    string       `json:"prebuild"`
	Grace       string       `json:"grace"`
	Retention   string       `json:"retention"`
	// Archive is where tables are archived before they are deleted at
	// Retention; nil when the plan archives nothing.
	Archive *FamilyArchive `json:"archive,omitempty"`
}

// FamilyArchive is a family's archive: its target and format.
type FamilyArchive struct {
	Target string               `json:"target"`
	Format family.ArchiveFormat `json:"format"`
}

// FamilyTier is one tier of a Family. Read and Write are set only when
// Billing is BillingProvisioned; MaxWrite only when the tier is auto
// scaled between Write and MaxWrite (a peak above the average rate).
type FamilyTier struct {
	Name     string        `json:"name"`
	Age      string        `json:"age"`
	Billing  string        `json:"billing"`
	Class    storage.Class `json:"class"`
	Read     int64         `json:"read,omitempty"`
	Write    int64         `json:"write,omitempty"`
	MaxWrite int64         `json:"max_write,omitempty"`
	// PITR is whether the tier's tables have point-in-time recovery.
	PITR bool `json:"pitr"`
}

// Billing modes as configuration files spell them, and BillingMixed for a
// plan whose tiers are billed both ways.
const (
	BillingProvisioned = "provisioned"
	BillingOnDemand    = "on_demand"
	BillingMixed       = "mixed"
)

// family returns the recommended family: the default family (family.Default)
// with the plan's period, shards, tiers and retention. The family's
// billing is the hot tier's; every tier says its own. With archiving, the
// family's retention is ArchiveAfter and its archive ArchiveTarget:
// tables are archived, and deleted from DynamoDB once the archive is
// verified.
func (in Input) family(period string, shards int, tiers []PlannedTier) Family {
	retention := in.Retention
	if in.ArchiveAfter > 0 {
		retention = in.ArchiveAfter
	}
	prefix := "tt_" + in.Family + "_"
	f := Family{
		Name:              in.Family,
		Prefix:            prefix,
		Period:            period,
		Naming:            "range",
		WriteTimeGrouping: in.WriteTimeGrouping,
		Shards:            shards,
		Layout:            in.Layout,
		Billing:           tiers[0].Billing,
		Prebuild:          FormatDuration(in.Prebuild),
		Grace:             FormatDuration(in.Grace),
		Retention:         FormatDuration(retention),
	}
	if in.Layout == LayoutChunk {
		f.ChunkWindow = FormatDuration(in.ChunkWindow)
	}
	if in.ArchiveAfter > 0 {
		f.Archive = &FamilyArchive{Target: in.ArchiveTarget, Format: in.ArchiveFormat}
	}
	for _, t := range tiers {
		ft := FamilyTier{Name: t.Name, Age: t.Age, Billing: t.Billing, Class: t.Class, PITR: t.PITR}
		if t.Billing == BillingProvisioned {
			ft.Read, ft.Write = t.Read, t.Write
			if t.MinWrite > 0 {
				ft.Write, ft.MaxWrite = t.MinWrite, t.Write
			}
		}
		f.Tiers = append(f.Tiers, ft)
	}
	return f
}

// FormatDuration spells a duration as configuration files do: "0", whole
// weeks as "12w", whole days as "90d", and otherwise a Go duration
// without zero units ("1h", "15m", "1h30m").
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%(7*day) == 0:
		return strconv.FormatInt(int64(d/(7*day)), 10) + "w"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
