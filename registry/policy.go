package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// policy is the part of a family an entry records, as JSON: everything
// that decides how a table is named, read and aged. Retention, archive and
// prebuild are the family's current ones (see the package documentation).
type policy struct {
	Prefix            string `json:"prefix"`
	Period            string `json:"period"`
	Naming            string `json:"naming"`
	WriteTimeGrouping bool   `json:"write_time_grouping"`
	Shards            int    `json:"shards"`
	Layout            string `json:"layout"`
	// ChunkWindow is the chunk layout's window, only in a chunk-layout
	// table's policy.
	ChunkWindow string       `json:"chunk_window,omitempty"`
	Billing     string       `json:"billing"`
	Tiers       []policyTier `json:"tiers"`
	Backfill    *policyTier  `json:"backfill,omitempty"`
	Grace       string       `json:"grace"`
	TTL         string       `json:"ttl,omitempty"`
	PITRDays    int          `json:"pitr_days,omitempty"`
	// IDScheme is the table's event id scheme; a policy recorded before
	// schemes has none, and its table has scheme 1.
	IDScheme int `json:"id_scheme,omitempty"`
}

type policyTier struct {
	Name    string `json:"name"`
	Periods int    `json:"age_periods,omitempty"`
	Age     string `json:"age,omitempty"`
	Billing string `json:"billing"`
	Read    int64  `json:"read,omitempty"`
	Write   int64  `json:"write,omitempty"`
	// Class, PITR and the limits are omitted when zero, so a policy
	// recorded before them reads back the same.
	Class     string `json:"class,omitempty"`
	PITR      bool   `json:"pitr,omitempty"`
	MaxRead   int64  `json:"max_read,omitempty"`
	MaxWrite  int64  `json:"max_write,omitempty"`
	WarmRead  int64  `json:"warm_read,omitempty"`
	WarmWrite int64  `json:"warm_write,omitempty"`
}

func encodePolicy(f family.Family) (string, error) {
	p := policy{
		Prefix:            f.Prefix,
		Period:            f.Granularity.String(),
		Naming:            f.Naming.String(),
		WriteTimeGrouping: f.WriteTimeGrouping,
		Shards:            f.Shards,
		Layout:            string(f.Layout),
		Billing:           string(f.Billing),
		Grace:             f.Grace.String(),
		PITRDays:          f.PITRDays,
		IDScheme:          int(f.IDScheme),
	}
	if f.TTL > 0 {
		p.TTL = f.TTL.String()
	}
	if f.Layout == family.LayoutChunk {
		p.ChunkWindow = f.ChunkWindow.String()
	}
	for _, t := range f.Tiers {
		p.Tiers = append(p.Tiers, tierOf(t))
	}
	if f.Backfill.Name != "" {
		b := tierOf(f.Backfill)
		p.Backfill = &b
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode policy of family %q: %w", f.Name, err)
	}
	return string(b), nil
}

func tierOf(t family.Tier) policyTier {
	c := t.Capacity
	pt := policyTier{Name: t.Name, Periods: t.Age.Periods, Billing: string(c.Billing), Read: c.Read, Write: c.Write,
		Class: string(c.Class), PITR: t.PITR, MaxRead: c.MaxRead, MaxWrite: c.MaxWrite, WarmRead: c.WarmRead, WarmWrite: c.WarmWrite}
	if t.Age.Duration != 0 {
		pt.Age = t.Age.Duration.String()
	}
	return pt
}

// maxMemoPolicies bounds the policies decodePolicy remembers.
const maxMemoPolicies = 256

// policyMemo maps a policy's text to its decoded family, for
// decodePolicy; memoPolicies counts its entries.
var (
	policyMemo   sync.Map
	memoPolicies atomic.Int32
)

// decodePolicy decodes an entry's policy. Every entry of a family made
// under one policy carries the same text, and the engine read the entries
// of a query's range for each query (now only when the family's version
// moved): decoding the JSON again each time was a visible share of the server's CPU in profiles of latest-10
// reads (docs/benchmarks.md says how to take them). So the
// first maxMemoPolicies texts decoded are remembered (a policy changes
// rarely), and each caller gets its own copy of the tiers.
func decodePolicy(s string) (family.Family, error) {
	if v, ok := policyMemo.Load(s); ok {
		f := v.(family.Family)
		f.Tiers = slices.Clone(f.Tiers)
		return f, nil
	}
	f, err := parsePolicy(s)
	if err != nil {
		return f, err
	}
	if memoPolicies.Load() < maxMemoPolicies {
		if _, loaded := policyMemo.LoadOrStore(s, f); !loaded {
			memoPolicies.Add(1)
		}
		f.Tiers = slices.Clone(f.Tiers)
	}
	return f, nil
}

// parsePolicy decodes a policy's text.
func parsePolicy(s string) (family.Family, error) {
	var p policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return family.Family{}, fmt.Errorf("decode policy: %w", err)
	}
	var f family.Family
	var err error
	if f.Granularity, err = period.ParseGranularity(p.Period); err != nil {
		return f, err
	}
	if f.Naming, err = naming.ParseScheme(p.Naming); err != nil {
		return f, err
	}
	f.Prefix = p.Prefix
	f.WriteTimeGrouping = p.WriteTimeGrouping
	f.Shards = max(p.Shards, 1)
	f.Layout = family.Layout(p.Layout)
	f.Billing = storage.Billing(p.Billing)
	f.PITRDays = p.PITRDays
	switch f.IDScheme = event.IDScheme(p.IDScheme); {
	case p.IDScheme == 0:
		f.IDScheme = event.IDScheme1
	case !f.IDScheme.Valid():
		// A scheme of a later version: writing with another would store
		// a retried event twice.
		return f, fmt.Errorf("decode policy: event id scheme %d is unknown to this version of timetable", p.IDScheme)
	}
	if f.Grace, err = parseDuration(p.Grace); err != nil {
		return f, err
	}
	if f.TTL, err = parseDuration(p.TTL); err != nil {
		return f, err
	}
	if f.ChunkWindow, err = parseDuration(p.ChunkWindow); err != nil {
		return f, err
	}
	if f.Layout == family.LayoutChunk && f.ChunkWindow <= 0 {
		return f, fmt.Errorf("decode policy: a chunk-layout table's policy has no chunk window")
	}
	for _, pt := range p.Tiers {
		t, err := pt.tier()
		if err != nil {
			return f, err
		}
		f.Tiers = append(f.Tiers, t)
	}
	if len(f.Tiers) == 0 {
		return f, fmt.Errorf("decode policy: no tiers")
	}
	if p.Backfill != nil {
		if f.Backfill, err = p.Backfill.tier(); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (pt policyTier) tier() (family.Tier, error) {
	d, err := parseDuration(pt.Age)
	if err != nil {
		return family.Tier{}, err
	}
	return family.Tier{
		Name: pt.Name,
		Age:  family.Age{Periods: pt.Periods, Duration: d},
		Capacity: storage.Capacity{Billing: storage.Billing(pt.Billing), Read: pt.Read, Write: pt.Write,
			Class: storage.Class(pt.Class), MaxRead: pt.MaxRead, MaxWrite: pt.MaxWrite, WarmRead: pt.WarmRead, WarmWrite: pt.WarmWrite},
		PITR: pt.PITR,
	}, nil
}

func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("decode policy: %w", err)
	}
	return d, nil
}
