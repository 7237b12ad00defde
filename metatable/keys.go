// Package metatable builds and parses every key of timetable's meta
// table, the one table beside the data tables that holds what the
// engine, the table registry, the tenants and the lifecycle manager keep.
// Its users own what their items mean; this file owns where they are:
//
//	kind             partition key        sort key
//	registry entry   registry#{family}    {period start}#{physical table}
//	registry version registryversion#{family}  version
//	logical table    tables#{tenant}      {logical table}
//	tenant           tenant#{name}        tenant
//	API key          apikey#{hash}        apikey
//	a tenant's key   keys#{tenant}        {key id}
//	cursor secret    secret               cursor
//	lease            lease#{name}         lease
//	new tables       newtables#{tenant}   newtables
//	migration        migrate#{table}      migration
//
// Every partition key but the secret's starts with its kind and "#", and
// the secret's has no "#", so no two kinds share a partition whatever
// the names. The registry's reads rely on one order (keys_test.go holds
// them to it): a family's entries sort by the start of their periods
// ({period start} is RFC 3339 in UTC with whole seconds, which sorts as
// time does for the years 0 to 9999), and RegistryHigh(t) sorts after
// every entry starting at t and before every entry starting later.
package metatable

import (
	"strings"
	"time"
)

// RegistryPK is the partition of a family's registry entries.
func RegistryPK(family string) string { return registryPrefix + family }

// RegistryStart is the sort-key prefix of the entries of tables whose
// periods start at t.
func RegistryStart(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// RegistrySK is the sort key of the entry of a physical table whose
// period starts at start.
func RegistrySK(start time.Time, table string) string { return RegistryStart(start) + "#" + table }

// RegistryHigh is above the sort key of every entry whose period starts at
// t: "~" sorts after every character of a table name.
func RegistryHigh(t time.Time) string { return RegistryStart(t) + "#~" }

// RegistryVersion is the key of the item counting the changes of a
// family's registry entries, in a partition of its own so that reading
// it per query takes nothing from the entries' partition.
func RegistryVersion(family string) (pk, sk string) { return "registryversion#" + family, "version" }

// LogicalTablesPK is the partition listing a tenant's logical tables, one
// item per table, the table's name its sort key.
func LogicalTablesPK(tenant string) string { return "tables#" + tenant }

// Tenant is the key of a tenant's item.
func Tenant(name string) (pk, sk string) { return tenantPrefix + name, "tenant" }

// TenantName returns the tenant whose item has key pk, sk, and whether it
// is a tenant's item at all.
func TenantName(pk, sk string) (string, bool) {
	name, ok := strings.CutPrefix(pk, tenantPrefix)
	return name, ok && sk == "tenant"
}

const tenantPrefix = "tenant#"

// APIKey is the key of the item of an API key, by the key's hash.
func APIKey(hash string) (pk, sk string) { return "apikey#" + hash, "apikey" }

// TenantKeysPK is the partition listing a tenant's API keys, one item
// per key, the key's id its sort key.
func TenantKeysPK(tenant string) string { return "keys#" + tenant }

// Secret is the key of the item holding the secret that signs cursors.
func Secret() (pk, sk string) { return "secret", "cursor" }

// NewTables is the key of the item counting the physical tables a
// tenant's writes made in the current hour (engine.TableBudget).
func NewTables(tenant string) (pk, sk string) { return "newtables#" + tenant, "newtables" }

// Lease is the key of the item of a named lease.
func Lease(name string) (pk, sk string) { return leasePrefix + name, "lease" }

// RegistryFamily returns the family whose registry entries are in
// partition pk, and whether pk is such a partition at all.
func RegistryFamily(pk string) (string, bool) { return strings.CutPrefix(pk, registryPrefix) }

const registryPrefix = "registry#"

// Migration is the key of the checkpoint of `timetable migrate`'s copy
// of a table, kept in the target's meta table; the empty table name is
// the key of the record of the migration itself.
func Migration(table string) (pk, sk string) { return migrationPrefix + table, "migration" }

// IsMigration reports whether pk is the partition of a migration's
// record or checkpoint.
func IsMigration(pk string) bool { return strings.HasPrefix(pk, migrationPrefix) }

const migrationPrefix = "migrate#"

// IsLease reports whether pk is the partition of a lease.
func IsLease(pk string) bool { return strings.HasPrefix(pk, leasePrefix) }

const leasePrefix = "lease#"
