// Package lifecycle is timetable's lifecycle manager: it keeps every
// family's physical tables in the shape the family's policy asks for. It
// creates the next period's table before the period starts, moves tables
// down through capacity tiers as they age, enables TTL, archives tables
// past retention and deletes them — the job the AWS blog does with a
// Lambda and two cron rules, and Fineo by hand.
//
// # Basics
//
// The work is split as in Cortex's table manager, without its globals:
//
//   - Plan(now, families, actual) is a pure function from the time, the
//     policy and what the registry says of each table to the actions that
//     bring the tables in line, each with a reason a person can read
//     ("period starts 2017-04-16T00:00:00Z, prebuild 1h0m0s").
//   - A Reconciler reads the families' tables from the table registry
//     (package registry), compares it with the store's listing, plans, and
//     applies the plan, recording each change in the table's entry. Every
//     action is idempotent and re-planned from the registry each cycle,
//     so running it twice changes nothing the second time, and a cycle cut
//     short resumes on the next.
//
// A Reconciler runs three ways: inside `timetable serve` on a jittered
// ticker (Run), as `timetable reconcile` (one cycle, or a dry run that
// shows the plan and changes nothing), and as an AWS Lambda handler
// (HandleLambda, for cmd/timetable-lambda).
//
// # Decisions
//
//   - Which tables should exist: the table events written now go to
//     (family.TableFor(now, now)), and every table events will go to
//     within the family's prebuild — the next period's and, with write-time
//     grouping, the next write month's (a week that straddles a month gets
//     its second table before the month begins). Tables for late data are
//     not planned: the engine makes them when late data arrives.
//   - Tiers are family.TierFor, applied to each table's own policy (its
//     registry entry's, the family's as it was when the table was made),
//     so changing a family's tiers reaches only tables made afterwards.
//     The engine creates tables with the same rule, so a table the engine
//     makes and one the planner makes agree. A table made after its period
//     ended (a backfill, or late data in a new write month) is on the
//     family's backfill tier (on-demand by default) until the month it was
//     made in is over, plus Grace, and then on the schedule's tier for its
//     age: it never costs a hot table's capacity.
//   - Drift: each cycle compares the registry with one ListTables pass per
//     family prefix. A table that exists without a live entry and whose
//     name parses as the family's is registered (action register: facts
//     from its tags, else its name); a live entry whose table is gone is
//     marked missing (action forget). Both run whatever kinds a job asks
//     for, since the other actions record their changes in the registry.
//     In the steady state a cycle makes no call per table: one registry
//     Query and the ListTables pages, and the few DescribeTable calls of
//     the sweep (sweep.go), which finds capacity and table class changed
//     outside timetable and puts back what the tier says.
//   - A lifecycle-only deployment needs nothing made beforehand: a cycle
//     that acts creates the meta table. A dry run creates nothing; on a
//     store without the meta table it plans from an empty registry.
//   - Retention (family.ExpiresAt): a table is past retention when both its
//     period and its write month ended at least Retention ago, so late data
//     is never deleted before its time. Nothing is deleted without a
//     retention; with an archive target, a table past retention is archived
//     first, and deleted only on a later cycle, once the Archiver says its
//     archive was read back and verified. A crash between the two repeats
//     or resumes the archive; it never deletes an unverified table.
//   - Fences. Before a table is archived or deleted it is fenced
//     (registry Entry.FencedAt): writers refuse it (503 with Retry-After;
//     once it is deleted, a late write makes its next generation). The
//     archive and the delete wait Options.FenceSettle (90 s) after the
//     fence, long enough for every writer to re-read the table's entry
//     (the engine's RouteTTL, 10 s) and end a write under way (its
//     WriteTimeout, a minute). Right before the delete, an Archiver that can
//     (package archive's CheckTable) scans the table again and compares it
//     with its archive; a difference is archived again rather than
//     deleted. That check is parallel and, once the fence has settled,
//     eventually consistent; one that stops before the cycle's deadline
//     keeps its progress and defers the delete, and the next cycle's
//     check resumes it: no table is deleted before a check completed. So
//     a reconciler whose clock runs ahead of the writers'
//     (by Options.ClockSkew, 5 minutes, it takes no table they still
//     fill; further, it costs them 503s) loses no acknowledged write.
//   - Compaction (action compact, package compact): a table of a family
//     of the chunk layout that has left the hot tier is fenced as above
//     (and, a row table, made of the chunk layout in the same registry
//     write), and once the fence has settled its events written one at a
//     time are packed into chunks, from the checkpoint in its registry
//     entry, stopping before the cycle's deadline; the write that records
//     it done (Entry.ChunkedAt) lifts the fence. By Options.Compaction:
//     in place (Pebble), or rewritten into the table's next physical
//     table (DynamoDB, compact.NextGeneration), whose switch lifts the
//     fence and whose old table a later cycle deletes, FenceSettle after
//     the switch. Actions on a rewritten table (capacity, archive,
//     delete) act on the table its entry names (Entry.TableName).
//   - The wait for a deleted table to be gone is bounded by
//     Options.DeleteWait (two minutes) and the cycle's context; a table
//     still deleting then counts as deleted.
//   - A table past retention gets no capacity changes: it is on its way
//     out. A table that is not ACTIVE is left for a later cycle.
//   - Only tables whose names parse as a family's (naming.Namer.Parse) are
//     looked at. Nothing else in the account or the store is ever touched.
//   - The store's refusals (storage.ErrRefused: DynamoDB's
//     LimitExceededException, ResourceInUseException, the limit on
//     capacity decreases (four a UTC day, then one an hour up to 27), on
//     switches to on demand (four in any 24 hours), on class changes (two
//     in 30 days, which the plan keeps by itself from the registry's
//     record, registry.Entry.ClassChanges)) and
//     throttling are normal: the action is reported as deferred and planned
//     again on the next cycle, minutes later. Nothing retries in a loop.
//     Other failures are reported as failed, the cycle goes on with the
//     other actions, and Reconcile returns ErrActionsFailed with the
//     results.
//   - A store that ignores table classes (storage.ErrUnsupported from
//     UpdateTable: DynamoDB Local, dynalite) is warned of once; the rest of
//     the tier is applied, the action is done with the class named in its
//     result's Err, and the entry records the class as ignored
//     (registry.Entry.ClassIgnored), so that it is not asked for again.
//   - Several servers may run the reconciler on one store; a Leaser lets
//     only the holder of a lease act. On DynamoDB the lease is an item of
//     the meta table written with a conditional Update (TableLease); on
//     Pebble the process owns the store and needs no lease. A dry run
//     changes nothing and takes no lease. The lease is renewed every third
//     of its TTL while a cycle acts, so that an archive longer than the
//     TTL is never joined by another server's; a cycle whose lease was
//     taken stops with ErrLeaseLost, and an archive it stopped is
//     deferred, resumed from its checkpoint by the next cycle (as is one
//     that stopped before its context's deadline). The lease is released
//     when the cycle ends.
//   - Reconcilers may still act at once (several `timetable reconcile`
//     runs, which take no lease, beside a server). Each archive, delete
//     and marking of a table missing holds the table's own lease
//     ("table#" and its name, through the Leaser or a TableLease in the
//     meta table; ErrTableBusy defers it otherwise), reads the entry
//     again and acts only on the generation it planned for. Registry
//     writes are conditional on the entry's revision, so an action
//     planned from an older read is deferred (registry.ErrStale) and
//     planned again, never written over a newer state. An entry left
//     creating whose table the store does not list is finished (the
//     table is made), never marked missing: its creator may be making it
//     now, by a clock behind this one.
//   - A table restored from its archive (registry state restored) is left
//     alone until the end its operator chose, then deleted again.
//   - Archiving lives in package archive; this package needs only the
//     small Archiver interface, opened per target and format by
//     Options.OpenArchiver.
//
// # Caveats
//
// A table's capacity, billing and TTL are what the registry says was last
// applied: a change made by hand in the AWS console is not seen (and not
// undone) until the table's tier changes.
//
// Without write-time grouping, an event for a table already past
// retention is refused when it is written (the engine), so it is never
// acknowledged and then deleted. Should the retention be lengthened after
// a table was deleted, late data makes the table again, as a new
// generation: the archive of the old one does not count for it (package
// archive), so it is archived again before it is deleted.
package lifecycle
