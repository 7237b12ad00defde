package metatable

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKindsApart checks that no two kinds share a partition, even with
// names built to look like another kind's key.
func TestKindsApart(t *testing.T) {
	names := []string{"", "a", "#", "tenant#x", "registry#", "secret", "lease", "apikey#h", "keys#t", "registryversion#", "newtables#t", "migrate#", "migrate#t"}
	kinds := map[string]func(string) string{
		"registry":        RegistryPK,
		"registryversion": func(n string) string { pk, _ := RegistryVersion(n); return pk },
		"tables":          LogicalTablesPK,
		"keys":            TenantKeysPK,
		"tenant":          func(n string) string { pk, _ := Tenant(n); return pk },
		"apikey":          func(n string) string { pk, _ := APIKey(n); return pk },
		"lease":           func(n string) string { pk, _ := Lease(n); return pk },
		"secret":          func(string) string { pk, _ := Secret(); return pk },
		"newtables":       func(n string) string { pk, _ := NewTables(n); return pk },
		"migration":       func(n string) string { pk, _ := Migration(n); return pk },
	}
	owner := map[string]string{}
	for kind, pk := range kinds {
		for _, n := range names {
			k := pk(n)
			if other, ok := owner[k]; ok {
				require.Equal(t, kind, other, "partition %q of kinds %s and %s", k, kind, other)
			}
			owner[k] = kind
		}
	}
	for _, n := range names {
		pk, sk := Tenant(n)
		got, ok := TenantName(pk, sk)
		require.True(t, ok)
		require.Equal(t, n, got)
	}
	pk, sk := APIKey("h")
	_, ok := TenantName(pk, sk)
	require.False(t, ok)
	pk, _ = Tenant("x")
	_, ok = TenantName(pk, "apikey")
	require.False(t, ok)
}

// TestRegistryOrder checks that entries sort by the start of their
// periods, and that RegistryHigh cuts between starts.
func TestRegistryOrder(t *testing.T) {
	day := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC)
	tables := []string{"A", "a", "tt_events_1491782400000_1491868799999", "z.-_9", strings.Repeat("z", 255)} // DynamoDB table names: [a-zA-Z0-9_.-]
	var keys []string
	for _, start := range []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), day.Add(-time.Second), day, day.Add(time.Second),
		day.AddDate(0, 0, 1), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	} {
		for _, table := range tables {
			keys = append(keys, RegistrySK(start, table))
		}
		keys = append(keys, RegistryHigh(start))
	}
	require.True(t, slices.IsSorted(keys), "%q", keys)
	// A start in another zone is the same instant.
	require.Equal(t, RegistrySK(day, "a"), RegistrySK(day.In(time.FixedZone("x", 3600)), "a"))
}

// TestKindParsers checks that the parsers of partition keys recognize
// their own kind and no other.
func TestKindParsers(t *testing.T) {
	f, ok := RegistryFamily(RegistryPK("events"))
	require.True(t, ok)
	require.Equal(t, "events", f)
	pk, _ := RegistryVersion("events")
	_, ok = RegistryFamily(pk)
	require.False(t, ok)
	pk, _ = Migration("tt_x")
	require.True(t, IsMigration(pk))
	pk, _ = Migration("")
	require.True(t, IsMigration(pk))
	pk, _ = Lease("lifecycle")
	require.True(t, IsLease(pk))
	require.False(t, IsMigration(pk))
	pk, _ = Tenant("migrate")
	require.False(t, IsMigration(pk))
	require.False(t, IsLease(pk))
}
