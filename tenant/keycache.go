package tenant

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// The key cache.
//
// A server keeps what it read of an API key for KeyCacheOptions.TTL
// (DefaultKeyTTL) and that a secret is no key for NegativeTTL
// (DefaultNegativeKeyTTL), so that a request costs no read of the store
// once its key was seen. The rules:
//
//   - A key revoked, rotated out or removed with its tenant through this
//     directory stops working here at once: the change is written into the
//     cache as it is written to the store.
//   - On every other server it stops working within TTL (plus, on
//     DynamoDB, the lag of an eventually consistent read: see
//     Authenticate).
//   - A key made through this directory works here at once (it is put in
//     the cache, replacing a negative entry); on another server, after at
//     most NegativeTTL, since a miss is confirmed by a strongly
//     consistent read before it is kept.
//   - A rotated key's end is kept with it, so it stops at its end even
//     while cached.
//   - The cache holds at most Size keys and Size secrets found to be no
//     key, each the most recently used: a client sending random keys
//     pushes out other random keys, never the live ones, and never grows
//     the cache.

// Defaults of KeyCacheOptions.
const (
	// DefaultKeyTTL is how long a server trusts what it read of a key.
	DefaultKeyTTL = 5 * time.Second
	// DefaultNegativeKeyTTL is how long a server trusts that a secret is
	// no key.
	DefaultNegativeKeyTTL = time.Second
	// DefaultKeyCacheSize is how many keys, and how many secrets found to
	// be none, a server keeps.
	DefaultKeyCacheSize = 10000
)

// KeyCacheOptions bound what a directory keeps of API keys. Zero fields are
// the defaults.
type KeyCacheOptions struct {
	// TTL is how long a key read from the store is trusted; a negative
	// TTL turns the cache off, and every Authenticate reads the store
	// strongly consistently.
	TTL time.Duration
	// NegativeTTL is how long a secret found to be no key is trusted; at
	// most TTL.
	NegativeTTL time.Duration
	// Size is how many keys the cache holds, and how many secrets found
	// to be no key.
	Size int
}

// EnsureDefaults fills in the zero fields.
func (o *KeyCacheOptions) EnsureDefaults() {
	if o.TTL == 0 {
		o.TTL = DefaultKeyTTL
	}
	if o.NegativeTTL == 0 {
		o.NegativeTTL = min(DefaultNegativeKeyTTL, max(o.TTL, 0))
	}
	if o.Size == 0 {
		o.Size = DefaultKeyCacheSize
	}
}

// Validate reports options that cannot be used: a negative size or
// NegativeTTL, or a NegativeTTL longer than the TTL of a cache that is on.
func (o KeyCacheOptions) Validate() error {
	if o.Size < 0 || o.NegativeTTL < 0 || (o.TTL > 0 && o.NegativeTTL > o.TTL) {
		return fmt.Errorf("timetable: key cache: size %d and negative TTL %s must not be negative, nor the negative TTL longer than the TTL %s",
			o.Size, o.NegativeTTL, o.TTL)
	}
	return nil
}

// Off reports whether the options turn the cache off.
func (o KeyCacheOptions) Off() bool { return o.TTL < 0 }

// digest is the SHA-256 of a key's secret, by which the cache knows it:
// the bytes of the hash the store keeps in hex, so that a request
// authenticated from the cache encodes nothing.
type digest [sha256.Size]byte

// digestOf returns the digest of a hash as the store keeps it.
func digestOf(hash string) digest {
	var d digest
	hex.Decode(d[:], []byte(hash))
	return d
}

// cachedKey is what the cache knows of a hash: the key, or that there is
// none, until a time.
type cachedKey struct {
	key   Key
	found bool
	until time.Time
}

// keyCache is the cache of API keys by hash. Its methods may be called
// from any number of goroutines at once.
type keyCache struct {
	opts KeyCacheOptions
	// found and missing hold the keys read and the hashes found to be no
	// key; each is an LRU of Size entries.
	found, missing *lru.Cache[digest, cachedKey]

	mu struct {
		sync.Mutex
		// epoch counts the changes made through this directory: a read of
		// the store that began before a change is not kept, since it may
		// be older than the change.
		epoch uint64
	}
}

func newKeyCache(opts KeyCacheOptions) *keyCache {
	found, _ := lru.New[digest, cachedKey](opts.Size)
	missing, _ := lru.New[digest, cachedKey](opts.Size)
	return &keyCache{opts: opts, found: found, missing: missing}
}

// get returns what the cache knows of hash at now, and whether it knows
// anything.
func (c *keyCache) get(hash digest, now time.Time) (cachedKey, bool) {
	if e, ok := c.found.Get(hash); ok && now.Before(e.until) {
		return e, true
	}
	if e, ok := c.missing.Get(hash); ok && now.Before(e.until) {
		return e, true
	}
	return cachedKey{}, false
}

// epoch returns the count of changes so far, to pass to learned.
func (c *keyCache) epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.epoch
}

// learned keeps what a read of the store begun at epoch found of hash at
// now, unless a change was made through this directory since.
func (c *keyCache) learned(epoch uint64, hash digest, k Key, found bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.epoch != epoch {
		return
	}
	if found {
		c.found.Add(hash, cachedKey{key: k, found: true, until: now.Add(c.opts.TTL)})
		return
	}
	c.missing.Add(hash, cachedKey{until: now.Add(c.opts.NegativeTTL)})
}

// changed records a key made or changed through this directory, as it is
// now in the store.
func (c *keyCache) changed(hash digest, k Key, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.epoch++
	c.missing.Remove(hash)
	c.found.Add(hash, cachedKey{key: k, found: true, until: now.Add(c.opts.TTL)})
}

// len returns how many entries the cache holds.
func (c *keyCache) len() int { return c.found.Len() + c.missing.Len() }
