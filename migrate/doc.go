// Package migrate copies a whole timetable store into another: from the
// embedded Pebble store to DynamoDB when a deployment outgrows one
// machine, from DynamoDB to Pebble for a local copy, and between any two
// stores by the same code, since every store keeps the same items under
// the same keys (package storage): two DynamoDB stores of other accounts
// or regions too. `timetable migrate --from STORE --to STORE` runs it;
// it names DynamoDB as --store does, by the one AWS configuration of its
// environment, so it refuses --from dynamodb --to dynamodb, which would
// be one store.
//
// # What it copies
//
// Every item, as it is: nothing is decoded and written again, so an
// event keeps its id, its period, its write month and its physical
// table, and the target's tables have the names, periods and layouts the
// source's had. That is:
//
//   - every physical table the registry names live (creating, active,
//     archived, restored) that exists in the source, made on the target
//     as its registry entry records it (Entry.Spec: capacity as last
//     applied, TTL attribute, tags), with all its items: events, series
//     index entries, rollups;
//   - the meta table: the registry itself (entries of every state, with
//     their generations, fences and past archives, and the families'
//     versions and policies), the logical tables of every tenant, the
//     tenants with their limits and scopes, their API keys by hash (the
//     keys go on working: only their hashes are stored), and the secret
//     that signs cursors. Leases are not copied: the source's lifecycle
//     holds them, not the target's.
//
// Families are configuration, not data: the target's server reads them
// from its --config, and the registry entries copied keep the policy each
// table was made with, whatever that configuration says now. A family the
// registry has and the configuration lacks is reported (Plan.Unknown).
// Tables archived and deleted are not in the store: their archives stay
// where the archive target keeps them, and the copied registry entries
// still point there.
//
// # Order
//
// The target's meta table is made first, since it holds the migration's
// record and checkpoints (metatable.Migration). Then the data tables,
// family by family in the order of their periods, then the meta table's
// items last: a target whose tenants and keys are there has all its
// events, so a server started on it early finds nothing, not a part.
//
// # Pages, budget and memory
//
// A table is read by a scan (storage.Scanner.ScanAfter) a page at a time,
// of at most Options.PageItems items and Options.PageBytes bytes, and each
// page is written with BatchWrite before the next is read: memory holds
// one page whatever the tables' sizes. With Options.WriteUnits the writes
// spend at most that many write capacity units a second (an item costs a
// unit per started KiB, as DynamoDB counts a standard write), through a
// token bucket (golang.org/x/time/rate) taken 25 items (a BatchWriteItem)
// at a time, so that a migration leaves the rest of a table's provisioned
// capacity to its other users.
//
// # Resuming
//
// After each page the table's checkpoint, in the target's meta table,
// records the key of the last item copied; a migration killed at any
// point and run again goes on after that key (ScanAfter resumes a scan in
// another process). The page written before a kill that saved no
// checkpoint is written again: BatchWrite replaces items of the same key,
// so nothing is doubled. For the same reason a migration run twice copies
// nothing twice: a table copied and verified is verified again, not
// copied again.
//
// The target must not be a store in use: a table the target has and the
// migration did not make (no checkpoint names it) fails the migration
// with ErrTargetInUse, as does a target meta table holding items with no
// record of this migration, so that a migration never merges into live
// tables. A table's checkpoint is saved before the table is made, so a
// kill between the two is resumed, not refused.
//
// # Verification
//
// Once a table is copied, it is scanned on both sides and the content
// hashes compared: the order-independent hash of the items that archives
// record (archive.ContentHash, over each item's DynamoDB JSON line) and
// the count of items. A table whose hashes differ is copied again from
// its start, once (the source changed since it was copied, as a store
// still written to does); if they differ still, the migration fails
// naming the table and both counts. The meta table is compared without
// the migration's checkpoints and the leases.
//
// # Cut-over
//
// The copy is of a store no one writes to: the embedded store is locked
// by the server that has it open, and a DynamoDB source written to during
// the copy would be found different at the verification. So a running
// server moves in four steps, which docs/migrate.md gives as commands:
// stop the server (SIGTERM: it stops taking requests and finishes those
// it took, so every write it acknowledged is durable), run the
// migration, start the server on the target with the same configuration,
// and let the clients send again what was refused meanwhile. Clients see
// connection errors while no server runs, and every write acknowledged
// before the stop is in the target. The copy is as long as the store is
// large; its rate is on docs/benchmarks.md.
//
// # Caveats
//
// A restore of an archive (archive.Archiver.Restore) into a live table
// is refused; a migration copies what the store holds and reads no
// archive. Tables a registry does not name (made by hand, or by another
// program in the same account) are not copied. DynamoDB deletes items
// whose TTL passed within days: the source's expired items are copied
// and then expire on the target.
package migrate
