// Package tenant keeps the owners of data and their API keys.
//
// A tenant is a name matching [a-z0-9][a-z0-9_-]{0,62}. Adding one makes
// its first API key, of scope ScopeAll; a tenant may have any number of
// keys (key.go says what a key is and how it is checked). Adding a tenant
// whose name is taken fails with ErrExists. Two processes adding the same
// new name at the same instant could both succeed on DynamoDB (no
// transactions there on every endpoint); both keys then work.
//
// Removing a tenant revokes every key it has, at once on the server it
// is removed through and within the key cache's bound on every other
// server on the store (keycache.go), and marks the tenant removed; its events stay where they are
// (nothing in the store deletes a tenant's items yet). Adding the name
// again makes a tenant with new keys, which sees the events the removed
// one left.
//
// Tenants and keys live in the meta table, under keys package metatable
// builds:
//
//	tenant#{name}  tenant   the tenant: created, removed once removed, and
//	                        for a tenant made before several keys, its
//	                        one key's hash
//	apikey#{hash}  apikey   a key's record: tenant, id, scope, created,
//	                        expires; the one item Authenticate reads
//	keys#{tenant}  {id}     a key's hash: the listing of a tenant's keys
package tenant

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// Errors of the directory.
var (
	ErrExists     = errors.New("timetable: tenant already exists")
	ErrNotFound   = errors.New("timetable: no such tenant")
	ErrUnknownKey = errors.New("timetable: unknown API key")
	ErrNoSuchKey  = errors.New("timetable: no such API key")
	ErrBadName    = errors.New("timetable: bad tenant name")
	ErrBadScope   = errors.New("timetable: bad API key scope")
	ErrBadGrace   = errors.New("timetable: bad grace period")
	// ErrRotated marks a rotation of a key that was rotated already: its
	// successor is the key to rotate, or a third key would be live.
	ErrRotated = errors.New("timetable: API key already rotated")
)

// Tenant is an owner of data.
type Tenant struct {
	Name    string
	Created time.Time
}

// Store is what the tenant directory needs of a store: the items of the
// meta table.
type Store interface {
	GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error)
	BatchWrite(ctx context.Context, table string, items []storage.Item) error
	Update(ctx context.Context, u storage.Update) error
	Query(ctx context.Context, q storage.Query) storage.Iterator
	Scan(ctx context.Context, table string) storage.Iterator
}

// Directory adds, removes and authenticates tenants and their keys. Its
// methods may be called from any number of goroutines at once. It keeps
// in memory only what Authenticate read of keys, for a bounded time
// (keycache.go); every other change is seen by every server on the store
// at once.
type Directory struct {
	store Store
	table string
	clock clock.Clock
	// keys is the cache of API keys; nil when it is off.
	keys *keyCache
	// eventual, when not nil, reads an item eventually consistently.
	eventual EventualReader
}

// Options are a directory's settings; the zero value is the defaults.
type Options struct {
	// Clock tells the time (the wall clock when nil): a rotated key stops
	// working by it, and cached keys are trusted by it.
	Clock clock.Clock
	// KeyCache bounds what the directory keeps of API keys.
	KeyCache KeyCacheOptions
}

// EventualReader is a store that can read an item eventually
// consistently, at half the cost of a strongly consistent read (DynamoDB).
// A store without it reads every item strongly consistently.
type EventualReader interface {
	GetItemEventual(ctx context.Context, table, pk, sk string) (storage.Item, error)
}

// NewDirectory returns the directory kept in the given table of a store,
// telling the time by clk (the wall clock when nil), with the default key
// cache. The table must exist.
func NewDirectory(store Store, table string, clk clock.Clock) *Directory {
	return New(store, table, Options{Clock: clk})
}

// New returns the directory kept in the given table of a store. The table
// must exist.
func New(store Store, table string, opts Options) *Directory {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	opts.KeyCache.EnsureDefaults()
	r := &Directory{store: store, table: table, clock: opts.Clock}
	if !opts.KeyCache.Off() {
		r.keys = newKeyCache(opts.KeyCache)
		// A cached key is trusted for TTL already; an eventually
		// consistent read adds DynamoDB's replication lag, usually under
		// a second, to that bound, so it is used only when the bound is
		// a second or more.
		if er, ok := store.(EventualReader); ok && opts.KeyCache.TTL >= time.Second {
			r.eventual = er
		}
	}
	return r
}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidName reports whether name is a valid tenant name.
func ValidName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: use 1 to 63 of a-z, 0-9, _ and -, starting with a letter or digit", ErrBadName, name)
	}
	return nil
}

// record is a tenant's item as stored.
type record struct {
	Tenant
	// removed is when the tenant was removed; zero while it lives.
	removed time.Time
	// legacyHash is the hash of the one key of a tenant made before
	// tenants had several; "" for others.
	legacyHash string
}

// get reads a tenant's item, removed or not; ErrNotFound when there is
// none.
func (r *Directory) get(ctx context.Context, name string) (record, error) {
	pk, sk := metatable.Tenant(name)
	item, err := r.store.GetItem(ctx, r.table, pk, sk)
	if errors.Is(err, storage.ErrItemNotFound) {
		return record{}, fmt.Errorf("tenant %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return record{}, fmt.Errorf("read tenant %q: %w", name, err)
	}
	return recordOf(name, item), nil
}

func recordOf(name string, item storage.Item) record {
	rec := record{Tenant: Tenant{Name: name}, removed: timeAttr(item, "removed")}
	rec.Created = timeAttr(item, "created")
	rec.legacyHash, _ = item.Attrs["hash"].(string)
	return rec
}

// Get returns a tenant, or an error wrapping ErrNotFound for a name never
// added or removed since.
func (r *Directory) Get(ctx context.Context, name string) (Tenant, error) {
	if err := ValidName(name); err != nil {
		return Tenant{}, err
	}
	rec, err := r.get(ctx, name)
	if err != nil {
		return Tenant{}, err
	}
	if !rec.removed.IsZero() {
		return Tenant{}, fmt.Errorf("tenant %q: %w (removed %s)", name, ErrNotFound, rec.removed.Format(time.RFC3339))
	}
	return rec.Tenant, nil
}

// Add creates a tenant with one key of ScopeAll and returns the key's
// secret, which is not stored and cannot be shown again. A removed
// tenant's name may be added again.
func (r *Directory) Add(ctx context.Context, name string, now time.Time) (string, error) {
	_, secret, err := r.AddTenant(ctx, name, now)
	return secret, err
}

// AddTenant is Add returning the key along with its secret.
func (r *Directory) AddTenant(ctx context.Context, name string, now time.Time) (Key, string, error) {
	if err := ValidName(name); err != nil {
		return Key{}, "", err
	}
	rec, err := r.get(ctx, name)
	switch {
	case err == nil && rec.removed.IsZero():
		return Key{}, "", fmt.Errorf("add tenant %q: %w", name, ErrExists)
	case err != nil && !errors.Is(err, ErrNotFound):
		return Key{}, "", fmt.Errorf("add tenant %q: %w", name, err)
	}
	k, secret, items, err := newKey(name, ScopeAll, now)
	if err != nil {
		return Key{}, "", fmt.Errorf("add tenant %q: %w", name, err)
	}
	pk, sk := metatable.Tenant(name)
	items = append(items, storage.Item{PK: pk, SK: sk, Attrs: map[string]any{"created": formatTime(now)}})
	if err := r.store.BatchWrite(ctx, r.table, items); err != nil {
		return Key{}, "", fmt.Errorf("add tenant %q: key %s: %w", name, k.ID, err)
	}
	r.changed(items[0].Attrs["hash"].(string), k)
	return k, secret, nil
}

// Remove revokes every key of a tenant and marks it removed; its events
// are left in the store. Removing it again changes nothing.
func (r *Directory) Remove(ctx context.Context, name string, now time.Time) error {
	if _, err := r.Get(ctx, name); err != nil {
		return fmt.Errorf("remove tenant: %w", err)
	}
	keys, err := r.Keys(ctx, name)
	if err != nil {
		return fmt.Errorf("remove tenant %q: %w", name, err)
	}
	// The keys first: a tenant marked removed whose keys still worked
	// would be worse than the other way round, and a failure here leaves
	// the tenant listed, so the removal can be sent again.
	for _, k := range keys {
		if _, err := r.expire(ctx, name, k.ID, now); err != nil {
			return fmt.Errorf("remove tenant %q: %w", name, err)
		}
	}
	pk, sk := metatable.Tenant(name)
	err = r.store.Update(ctx, storage.Update{Table: r.table, PK: pk, SK: sk,
		Conds:   []storage.Cond{storage.Exists("created")},
		Actions: []storage.Action{storage.Set("removed", formatTime(now))}})
	if err != nil {
		return fmt.Errorf("remove tenant %q: %w", name, err)
	}
	return nil
}

// List returns every tenant not removed, in name order.
func (r *Directory) List(ctx context.Context) ([]Tenant, error) {
	it := r.store.Scan(ctx, r.table)
	defer it.Close()
	var out []Tenant
	for it.Next() {
		item := it.Item()
		name, ok := metatable.TenantName(item.PK, item.SK)
		if !ok {
			continue
		}
		if rec := recordOf(name, item); rec.removed.IsZero() {
			out = append(out, rec.Tenant)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	slices.SortFunc(out, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// formatTime is how the directory stores a time.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// timeAttr reads a time the directory stored, zero when absent.
func timeAttr(item storage.Item, name string) time.Time {
	s, _ := item.Attrs[name].(string)
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
