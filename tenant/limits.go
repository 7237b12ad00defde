package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// Limits are a tenant's limits, kept with its record: api.TenantLimits,
// where the type is defined once for the HTTP API, the configuration
// and this package (its Validate and Or are there).
type Limits = api.TenantLimits

// limitsAttr is the tenant item's attribute holding its limits, as JSON.
const limitsAttr = "limits"

// Limits returns the limits the operator set for a tenant: the zero
// Limits when none were set. A tenant never added, or removed, is an
// error wrapping ErrNotFound.
func (r *Directory) Limits(ctx context.Context, name string) (Limits, error) {
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
func (r *Directory) SetLimits(ctx context.Context, name string, l Limits) error {
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
