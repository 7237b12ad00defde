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
	"slices"
	"strings"
	"time"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// API keys.
//
// A key is "tt_" followed by 32 random bytes in base64url, shown once
// when it is made; the store keeps only its SHA-256. A key is looked up
// by its hash and the stored hash compared in constant time, so neither
// the store nor a timing side channel gives a key away. Each key has
//
//   - an id: the first 16 hex digits of its hash, printable and safe to
//     show (it narrows a guess of a 256-bit secret by nothing useful), so
//     keys made before ids existed have one too;
//   - a creation time;
//   - a scope: ScopeAll, or ScopeRead for a key that reads and never
//     writes;
//   - an expiry, once revoked (now) or rotated out (now + a grace period,
//     DefaultGrace unless told), after which it is refused.
//
// Decision: a server keeps what it read of a key for a bounded time
// (keycache.go says the rules): a request costs no read of the store once
// its key was seen in the last KeyCacheOptions.TTL, a key revoked through
// a server is refused there at once and on every other server within the
// TTL. A read of a key the cache lacks is one GetItem: eventually
// consistent on DynamoDB (half a read unit) with the cache on, strongly
// consistent (one read unit) to confirm that a key is missing, and with
// the cache off.
//
// Keys of the version before several keys per tenant keep working
// unchanged: their record holds the tenant and the hash, their tenant's
// item the hash, and their id comes from the hash like any other.

// DefaultGrace is how long a rotated key keeps working beside its
// replacement, so that clients can move to the new one.
const DefaultGrace = 24 * time.Hour

// Scope is what a key may do.
type Scope string

// Scopes.
const (
	// ScopeAll reads and writes.
	ScopeAll Scope = "all"
	// ScopeRead reads only: a write with it is refused.
	ScopeRead Scope = "read"
)

// ParseScope reads a scope by its name; "" is ScopeAll.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", ScopeAll:
		return ScopeAll, nil
	case ScopeRead:
		return ScopeRead, nil
	}
	return "", fmt.Errorf("%w %q: use all or read", ErrBadScope, s)
}

// Key is an API key as the directory records it; the secret is not kept.
type Key struct {
	ID      string
	Tenant  string
	Scope   Scope
	Created time.Time
	// Expires is when the key stops working: zero for a key without an
	// end, in the past for a revoked one, in the future for one rotated
	// out and still in its grace period.
	Expires time.Time
}

// Live reports whether the key works at now.
func (k Key) Live(now time.Time) bool { return k.Expires.IsZero() || now.Before(k.Expires) }

// KeyState is where a key stands at a time, as the admin API and
// `timetable tenant keys` say it.
type KeyState string

// Key states.
const (
	// KeyLive works, with no end set.
	KeyLive KeyState = "live"
	// KeyExpiring was rotated out and still works, until it expires.
	KeyExpiring KeyState = "expiring"
	// KeyRevoked no longer works: revoked, or expired.
	KeyRevoked KeyState = "revoked"
)

// State returns where the key stands at now.
func (k Key) State(now time.Time) KeyState {
	switch {
	case !k.Live(now):
		return KeyRevoked
	case !k.Expires.IsZero():
		return KeyExpiring
	}
	return KeyLive
}

// CanWrite reports whether the key's scope lets it write.
func (k Key) CanWrite() bool { return k.Scope != ScopeRead }

// newKey makes a key of a tenant: the key, its secret, and the items that
// record it.
func newKey(tenant string, scope Scope, now time.Time) (Key, string, []storage.Item, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return Key{}, "", nil, fmt.Errorf("make API key: %w", err)
	}
	secret := "tt_" + base64.RawURLEncoding.EncodeToString(b)
	hash := hashKey(secret)
	k := Key{ID: idOf(hash), Tenant: tenant, Scope: scope, Created: now.UTC()}
	recPK, recSK := metatable.APIKey(hash)
	rec := storage.Item{PK: recPK, SK: recSK, Attrs: map[string]any{
		"tenant": tenant, "hash": hash, "id": k.ID, "scope": string(scope), "created": formatTime(now),
	}}
	listing := storage.Item{PK: metatable.TenantKeysPK(tenant), SK: k.ID, Attrs: map[string]any{"hash": hash}}
	return k, secret, []storage.Item{rec, listing}, nil
}

// keyOf reads a key's record.
func keyOf(item storage.Item) Key {
	hash, _ := item.Attrs["hash"].(string)
	k := Key{ID: idOf(hash), Scope: ScopeAll, Created: timeAttr(item, "created"), Expires: timeAttr(item, "expires")}
	k.Tenant, _ = item.Attrs["tenant"].(string)
	if s, ok := item.Attrs["scope"].(string); ok {
		k.Scope = Scope(s)
	}
	return k
}

// AddKey makes a new key for a live tenant and returns it with its
// secret, which is not stored and cannot be shown again.
func (r *Directory) AddKey(ctx context.Context, tenant string, scope Scope, now time.Time) (Key, string, error) {
	if _, err := r.Get(ctx, tenant); err != nil {
		return Key{}, "", fmt.Errorf("add API key: %w", err)
	}
	k, secret, items, err := newKey(tenant, scope, now)
	if err != nil {
		return Key{}, "", err
	}
	if err := r.store.BatchWrite(ctx, r.table, items); err != nil {
		return Key{}, "", fmt.Errorf("add API key %s of tenant %q: %w", k.ID, tenant, err)
	}
	r.changed(items[0].Attrs["hash"].(string), k)
	return k, secret, nil
}

// Keys returns a tenant's keys, revoked ones included, oldest first.
func (r *Directory) Keys(ctx context.Context, tenant string) ([]Key, error) {
	stored, err := r.storedKeys(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(stored))
	for i, sk := range stored {
		out[i] = sk.Key
	}
	return out, nil
}

// storedKey is a key and its hash, the key of its record.
type storedKey struct {
	Key
	hash string
}

// storedKeys returns a tenant's keys with their hashes, oldest first.
func (r *Directory) storedKeys(ctx context.Context, tenant string) ([]storedKey, error) {
	rec, err := r.get(ctx, tenant)
	if err != nil {
		return nil, err
	}
	hashes, err := r.keyHashes(ctx, rec)
	if err != nil {
		return nil, err
	}
	out := make([]storedKey, 0, len(hashes))
	for _, hash := range hashes {
		k, err := r.record(ctx, hash)
		if errors.Is(err, ErrNoSuchKey) {
			continue // listed, but its record was never written
		}
		if err != nil {
			return nil, err
		}
		if k.Created.IsZero() {
			k.Created = rec.Created // a key of the version before ids
		}
		if k.Tenant != tenant || k.Created.Before(rec.Created) {
			continue // a key of an earlier tenant of the same name
		}
		out = append(out, storedKey{Key: k, hash: hash})
	}
	slices.SortFunc(out, func(a, b storedKey) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// keyHashes returns the hashes of the keys a tenant's listing names, and
// of its key of the version before several keys.
func (r *Directory) keyHashes(ctx context.Context, rec record) ([]string, error) {
	it := r.store.Query(ctx, storage.Query{Table: r.table, PK: metatable.TenantKeysPK(rec.Name)})
	defer it.Close()
	var hashes []string
	for it.Next() {
		if h, ok := it.Item().Attrs["hash"].(string); ok {
			hashes = append(hashes, h)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("list API keys of tenant %q: %w", rec.Name, err)
	}
	if rec.legacyHash != "" && !slices.Contains(hashes, rec.legacyHash) {
		hashes = append(hashes, rec.legacyHash)
	}
	return hashes, nil
}

// record reads the record of the key with a hash.
func (r *Directory) record(ctx context.Context, hash string) (Key, error) {
	pk, sk := metatable.APIKey(hash)
	item, err := r.store.GetItem(ctx, r.table, pk, sk)
	if errors.Is(err, storage.ErrItemNotFound) {
		return Key{}, ErrNoSuchKey
	}
	if err != nil {
		return Key{}, fmt.Errorf("read API key: %w", err)
	}
	return keyOf(item), nil
}

// find returns a tenant's key by its id, and its hash.
func (r *Directory) find(ctx context.Context, tenant, id string) (storedKey, error) {
	keys, err := r.storedKeys(ctx, tenant)
	if err != nil {
		return storedKey{}, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return storedKey{}, fmt.Errorf("API key %q of tenant %q: %w", id, tenant, ErrNoSuchKey)
}

// Revoke makes a tenant's key fail from now on, at once through this
// directory and within the key cache's TTL on every other server, and
// returns it. Revoking a key again, or one already expired, keeps
// its first end.
func (r *Directory) Revoke(ctx context.Context, tenant, id string, now time.Time) (Key, error) {
	if _, err := r.Get(ctx, tenant); err != nil {
		return Key{}, fmt.Errorf("revoke API key: %w", err)
	}
	return r.expire(ctx, tenant, id, now)
}

// Rotation is what Rotate did.
type Rotation struct {
	// New is the new key, and Secret its secret, which is not stored and
	// cannot be shown again.
	New    Key
	Secret string
	// Old is the key rotated out, with its end.
	Old Key
}

// Rotate makes a new key of the same scope as a tenant's key id, and sets
// the old key to stop working after grace (DefaultGrace when zero; an
// earlier end it has already is kept).
func (r *Directory) Rotate(ctx context.Context, tenant, id string, grace time.Duration, now time.Time) (Rotation, error) {
	if grace < 0 {
		return Rotation{}, fmt.Errorf("rotate API key %q: %w: grace %s is negative", id, ErrBadGrace, grace)
	}
	if grace == 0 {
		grace = DefaultGrace
	}
	old, err := r.find(ctx, tenant, id)
	if err != nil {
		return Rotation{}, fmt.Errorf("rotate API key: %w", err)
	}
	if !old.Live(now) {
		return Rotation{}, fmt.Errorf("rotate API key %q of tenant %q: %w (revoked %s)", id, tenant, ErrNoSuchKey, old.Expires.Format(time.RFC3339))
	}
	if !old.Expires.IsZero() {
		// Rotated already, and in its grace period: a second new key
		// would leave three live. (Two rotations at once may both pass
		// this check; each answers its new key.)
		return Rotation{}, fmt.Errorf("rotate API key %q of tenant %q: %w: it ends %s; rotate its successor instead",
			id, tenant, ErrRotated, old.Expires.Format(time.RFC3339))
	}
	k, secret, err := r.AddKey(ctx, tenant, old.Scope, now)
	if err != nil {
		return Rotation{}, fmt.Errorf("rotate API key %q: %w", id, err)
	}
	ended, err := r.expire(ctx, tenant, id, now.Add(grace))
	if err != nil {
		return Rotation{}, fmt.Errorf("rotate API key %q: new key %s made, old one not set to expire: %w", id, k.ID, err)
	}
	return Rotation{New: k, Secret: secret, Old: ended}, nil
}

// expire sets a tenant's key to stop working at end, unless it ends
// earlier already, and returns it as it is now.
func (r *Directory) expire(ctx context.Context, tenant, id string, end time.Time) (Key, error) {
	k, err := r.find(ctx, tenant, id)
	if err != nil {
		return Key{}, err
	}
	if !k.Expires.IsZero() && !k.Expires.After(end) {
		return k.Key, nil
	}
	pk, sk := metatable.APIKey(k.hash)
	err = r.store.Update(ctx, storage.Update{Table: r.table, PK: pk, SK: sk,
		Conds:   []storage.Cond{storage.Equal("tenant", tenant)},
		Actions: []storage.Action{storage.Set("expires", formatTime(end))}})
	if err != nil {
		return Key{}, fmt.Errorf("expire API key %q of tenant %q: %w", id, tenant, err)
	}
	k.Expires = end.UTC()
	r.changed(k.hash, k.Key)
	return k.Key, nil
}

// Authenticate returns the key a secret is, or an error wrapping
// ErrUnknownKey for a secret that is no key, or a key revoked or expired.
// It reads the key's record from the store unless the key cache knows it
// (keycache.go).
func (r *Directory) Authenticate(ctx context.Context, secret string) (Key, error) {
	sum := digest(sha256.Sum256([]byte(secret)))
	now := r.clock.Now()
	if r.keys == nil {
		k, found, err := r.read(ctx, hex.EncodeToString(sum[:]), false)
		return live(k, found, err, now)
	}
	if c, ok := r.keys.get(sum, now); ok {
		return live(c.key, c.found, nil, now)
	}
	hash := hex.EncodeToString(sum[:])
	epoch := r.keys.epoch()
	k, found, err := r.read(ctx, hash, r.eventual != nil)
	if err == nil && !found && r.eventual != nil {
		// A key made on another server a moment ago may not have reached
		// every replica: a miss is kept only once a strongly consistent
		// read confirms it, so a new key waits at most NegativeTTL.
		k, found, err = r.read(ctx, hash, false)
	}
	if err == nil {
		r.keys.learned(epoch, sum, k, found, now)
	}
	return live(k, found, err, now)
}

// read reads the record of the key with a hash, eventually consistently
// when asked to, and reports whether there is one.
func (r *Directory) read(ctx context.Context, hash string, eventual bool) (Key, bool, error) {
	pk, sk := metatable.APIKey(hash)
	var item storage.Item
	var err error
	if eventual {
		item, err = r.eventual.GetItemEventual(ctx, r.table, pk, sk)
	} else {
		item, err = r.store.GetItem(ctx, r.table, pk, sk)
	}
	if errors.Is(err, storage.ErrItemNotFound) {
		return Key{}, false, nil
	}
	if err != nil {
		return Key{}, false, fmt.Errorf("authenticate: %w", err)
	}
	stored, _ := item.Attrs["hash"].(string)
	k := keyOf(item)
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 || k.Tenant == "" {
		return Key{}, false, nil
	}
	return k, true, nil
}

// live is Authenticate's answer for what it found of a key at now.
func live(k Key, found bool, err error, now time.Time) (Key, error) {
	switch {
	case err != nil:
		return Key{}, err
	case !found:
		return Key{}, ErrUnknownKey
	case !k.Live(now):
		return Key{}, fmt.Errorf("%w: key %s was revoked at %s", ErrUnknownKey, k.ID, k.Expires.Format(time.RFC3339))
	}
	return k, nil
}

// changed records in the key cache a key made or changed through this
// directory.
func (r *Directory) changed(hash string, k Key) {
	if r.keys != nil {
		r.keys.changed(digestOf(hash), k, r.clock.Now())
	}
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// idOf is the id of the key with a hash.
func idOf(hash string) string { return hash[:min(16, len(hash))] }
