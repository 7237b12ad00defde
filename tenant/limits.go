package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// ErrBadLimits is a Limits with a negative or non-finite field.
var ErrBadLimits = errors.New("timetable: bad tenant limits")

// Limits are what one tenant may ask of a server: its write rates and
// its concurrent queries. A zero field means the server's default (its
// configuration); a tenant's Limits are the overrides the operator set,
// kept with the tenant's record in the meta table, so that every server
// on the store applies them.
type Limits struct {
	// WriteEventsPerSecond is the events a tenant may write a second,
	// over time, with bursts of WriteEventsBurst.
	WriteEventsPerSecond float64 `json:"write_events_per_second,omitempty"`
	// WriteEventsBurst is the most events a tenant may write at once
	// after a quiet while.
	WriteEventsBurst int `json:"write_events_burst,omitempty"`
	// WriteBytesPerSecond is the request body bytes a tenant may write a
	// second, over time, with bursts of WriteBytesBurst.
	WriteBytesPerSecond float64 `json:"write_bytes_per_second,omitempty"`
	// WriteBytesBurst is the most body bytes a tenant may write at once
	// after a quiet while.
	WriteBytesBurst int `json:"write_bytes_burst,omitempty"`
	// MaxConcurrentQueries is the queries and aggregates a tenant may
	// have running at once.
	MaxConcurrentQueries int `json:"max_concurrent_queries,omitempty"`
	// MaxQueryPartitions is the partitions (one series' shard in one
	// physical table) that a tenant's reads of every series may hold at
	// once, across its queries and aggregates, out of the server's query
	// budget, and its InfluxQL answers at engine.QueryPartitionBytes a
	// partition.
	MaxQueryPartitions int `json:"max_query_partitions,omitempty"`
	// MaxConcurrentWrites is the write requests of a tenant the server
	// works on at once; more wait briefly for a turn.
	MaxConcurrentWrites int `json:"max_concurrent_writes,omitempty"`
}

// Validate returns an error wrapping ErrBadLimits for a negative or
// non-finite field.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"write_events_per_second", l.WriteEventsPerSecond},
		{"write_events_burst", float64(l.WriteEventsBurst)},
		{"write_bytes_per_second", l.WriteBytesPerSecond},
		{"write_bytes_burst", float64(l.WriteBytesBurst)},
		{"max_concurrent_queries", float64(l.MaxConcurrentQueries)},
		{"max_query_partitions", float64(l.MaxQueryPartitions)},
		{"max_concurrent_writes", float64(l.MaxConcurrentWrites)},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: %s is %v: use zero for the server's default, or a positive number", ErrBadLimits, f.name, f.v)
		}
	}
	return nil
}

// Or returns l with each zero field taken from defaults.
func (l Limits) Or(defaults Limits) Limits {
	if l.WriteEventsPerSecond == 0 {
		l.WriteEventsPerSecond = defaults.WriteEventsPerSecond
	}
	if l.WriteEventsBurst == 0 {
		l.WriteEventsBurst = defaults.WriteEventsBurst
	}
	if l.WriteBytesPerSecond == 0 {
		l.WriteBytesPerSecond = defaults.WriteBytesPerSecond
	}
	if l.WriteBytesBurst == 0 {
		l.WriteBytesBurst = defaults.WriteBytesBurst
	}
	if l.MaxConcurrentQueries == 0 {
		l.MaxConcurrentQueries = defaults.MaxConcurrentQueries
	}
	if l.MaxQueryPartitions == 0 {
		l.MaxQueryPartitions = defaults.MaxQueryPartitions
	}
	if l.MaxConcurrentWrites == 0 {
		l.MaxConcurrentWrites = defaults.MaxConcurrentWrites
	}
	return l
}

// limitsAttr is the tenant item's attribute holding its limits, as JSON.
const limitsAttr = "limits"

// Limits returns the limits the operator set for a tenant: the zero
// Limits when none were set. A tenant never added, or removed, is an
// error wrapping ErrNotFound.
func (r *Registry) Limits(ctx context.Context, name string) (Limits, error) {
	if err := ValidName(name); err != nil {
		return Limits{}, err
	}
	pk, sk := metatable.Tenant(name)
	item, err := r.store.GetItem(ctx, r.table, pk, sk)
	if errors.Is(err, storage.ErrItemNotFound) {
		return Limits{}, fmt.Errorf("tenant %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Limits{}, fmt.Errorf("read tenant %q: %w", name, err)
	}
	if rec := recordOf(name, item); !rec.removed.IsZero() {
		return Limits{}, fmt.Errorf("tenant %q: %w", name, ErrNotFound)
	}
	return limitsOf(item)
}

// limitsOf reads the limits of a tenant's item.
func limitsOf(item storage.Item) (Limits, error) {
	var l Limits
	s, _ := item.Attrs[limitsAttr].(string)
	if s == "" {
		return l, nil
	}
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return Limits{}, fmt.Errorf("tenant limits %q: %w", s, err)
	}
	return l, nil
}

// SetLimits replaces the limits of a tenant: the zero Limits goes back to
// the server's defaults for every field. A tenant never added, or
// removed, is an error wrapping ErrNotFound.
func (r *Registry) SetLimits(ctx context.Context, name string, l Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if _, err := r.Get(ctx, name); err != nil {
		return fmt.Errorf("set limits: %w", err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("set limits of %q: %w", name, err)
	}
	pk, sk := metatable.Tenant(name)
	err = r.store.Update(ctx, storage.Update{Table: r.table, PK: pk, SK: sk,
		Conds:   []storage.Cond{storage.Exists("created")},
		Actions: []storage.Action{storage.Set(limitsAttr, string(b))}})
	if err != nil {
		return fmt.Errorf("set limits of %q: %w", name, err)
	}
	return nil
}
