package tenant_test

import (
	"context"
	"testing"
)

// BenchmarkAuthenticate measures what every authenticated request pays
// for a key checked in the store each time (no cache): one GetItem of
// the meta table, on Pebble.
func BenchmarkAuthenticate(b *testing.B) {
	r, _ := newDirectory(b)
	ctx := context.Background()
	key, err := r.Add(ctx, "acme", now)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Authenticate(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
}
