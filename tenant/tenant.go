// Package tenant keeps the owners of data and their API keys.
//
// A tenant is a name matching [a-z0-9][a-z0-9_-]{0,62}. Its API key is
// "tt_" followed by 32 random bytes in base64url, shown once when the
// tenant is added; the store keeps only the key's SHA-256. A key is looked
// up by its hash and the stored hash is compared in constant time, so
// neither the store nor a timing side channel gives a key away.
//
// Tenants live in the meta table (see package engine), as two items: the
// tenant, under "tenant#{name}", and its key, under "apikey#{hash}".
// Adding a tenant whose name is taken fails with ErrExists. Two processes
// adding the same new name at the same instant could both succeed on
// DynamoDB (no transactions there on every endpoint); the later key wins.
package tenant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// Errors of the registry.
var (
	ErrExists     = errors.New("timetable: tenant already exists")
	ErrUnknownKey = errors.New("timetable: unknown API key")
	ErrBadName    = errors.New("timetable: bad tenant name")
)

// Tenant is an owner of data.
type Tenant struct {
	Name    string
	Created time.Time
}

// Store is what the tenant registry needs of a store: the items of the
// meta table.
type Store interface {
	GetItem(ctx context.Context, table, pk, sk string) (storage.Item, error)
	BatchWrite(ctx context.Context, table string, items []storage.Item) error
	Scan(ctx context.Context, table string) storage.Iterator
}

// Registry adds and authenticates tenants. Its methods may be called from
// any number of goroutines at once.
type Registry struct {
	store Store
	table string

	mu struct {
		sync.Mutex
		// byHash caches authenticated keys by their hash.
		byHash map[string]Tenant
	}
}

// NewRegistry returns the registry kept in the given table of a store. The
// table must exist.
func NewRegistry(store Store, table string) *Registry {
	r := &Registry{store: store, table: table}
	r.mu.byHash = map[string]Tenant{}
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

// Add creates a tenant and returns its new API key. The key is not stored
// and cannot be shown again.
func (r *Registry) Add(ctx context.Context, name string, now time.Time) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	tenantPK, tenantSK := metatable.Tenant(name)
	if _, err := r.store.GetItem(ctx, r.table, tenantPK, tenantSK); err == nil {
		return "", fmt.Errorf("add tenant %q: %w", name, ErrExists)
	} else if !errors.Is(err, storage.ErrItemNotFound) {
		return "", fmt.Errorf("add tenant %q: %w", name, err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("add tenant %q: %w", name, err)
	}
	key := "tt_" + base64.RawURLEncoding.EncodeToString(secret)
	hash := hashKey(key)
	created := now.UTC().Format(time.RFC3339Nano)
	keyPK, keySK := metatable.APIKey(hash)
	items := []storage.Item{
		{PK: keyPK, SK: keySK, Attrs: map[string]any{"tenant": name, "hash": hash}},
		{PK: tenantPK, SK: tenantSK, Attrs: map[string]any{"hash": hash, "created": created}},
	}
	if err := r.store.BatchWrite(ctx, r.table, items); err != nil {
		return "", fmt.Errorf("add tenant %q: %w", name, err)
	}
	return key, nil
}

// Authenticate returns the tenant an API key belongs to, or an error
// wrapping ErrUnknownKey.
func (r *Registry) Authenticate(ctx context.Context, key string) (Tenant, error) {
	hash := hashKey(key)
	r.mu.Lock()
	t, ok := r.mu.byHash[hash]
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	keyPK, keySK := metatable.APIKey(hash)
	item, err := r.store.GetItem(ctx, r.table, keyPK, keySK)
	if errors.Is(err, storage.ErrItemNotFound) {
		return Tenant{}, ErrUnknownKey
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("authenticate: %w", err)
	}
	stored, _ := item.Attrs["hash"].(string)
	name, _ := item.Attrs["tenant"].(string)
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 || name == "" {
		return Tenant{}, ErrUnknownKey
	}
	t = Tenant{Name: name}
	tenantPK, tenantSK := metatable.Tenant(name)
	if ti, err := r.store.GetItem(ctx, r.table, tenantPK, tenantSK); err == nil {
		// A key whose tenant record was replaced (a re-added name) is dead.
		if h, _ := ti.Attrs["hash"].(string); subtle.ConstantTimeCompare([]byte(h), []byte(hash)) != 1 {
			return Tenant{}, ErrUnknownKey
		}
		if c, ok := ti.Attrs["created"].(string); ok {
			t.Created, _ = time.Parse(time.RFC3339Nano, c)
		}
	} else {
		return Tenant{}, fmt.Errorf("authenticate: %w", err)
	}
	r.mu.Lock()
	r.mu.byHash[hash] = t
	r.mu.Unlock()
	return t, nil
}

// List returns every tenant, in name order.
func (r *Registry) List(ctx context.Context) ([]Tenant, error) {
	it := r.store.Scan(ctx, r.table)
	defer it.Close()
	var out []Tenant
	for it.Next() {
		item := it.Item()
		name, ok := metatable.TenantName(item.PK, item.SK)
		if !ok {
			continue
		}
		t := Tenant{Name: name}
		if c, ok := item.Attrs["created"].(string); ok {
			t.Created, _ = time.Parse(time.RFC3339Nano, c)
		}
		out = append(out, t)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	sortTenants(out)
	return out, nil
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func sortTenants(ts []Tenant) {
	slices.SortFunc(ts, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
}
