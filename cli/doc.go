// Package cli is the timetable command line: the cobra commands behind
// the timetable binary, which only wires them to the process (signals,
// exit codes).
//
// # Commands
//
//	timetable serve     [--addr 127.0.0.1:8080] [--shutdown-timeout 30s]
//	timetable tenant add|remove NAME
//	timetable tenant list [--format table|json]
//	timetable tenant keys NAME [--format table|json]
//	timetable tenant add-key NAME [--scope all|read]
//	timetable tenant revoke NAME ID
//	timetable tenant rotate NAME [--key ID] [--grace DUR]
//	timetable write  --table T [--series S] [--tenant NAME] [--batch 5000] [FILE|-]
//	timetable query  --table T [--from TIME] [--to TIME] [--series S] [--order asc|desc] [--limit N] [--fields a,b] [--tenant NAME] [--format table|json|csv]
//	timetable tables [--family F] [--format table|json]
//	timetable tables adopt NAME... [--force]
//	timetable reconcile [--now TIME] [--dry-run] [--format table|json]
//	timetable plan   --item-bytes N --rate EV_PER_S [...]
//	timetable compact
//
// Every command takes --config FILE (the YAML configuration of package
// config; the defaults without one), --store pebble:DIR|dynamodb (Pebble
// in ./timetable-data without one), --server URL (below), --log-level
// (info for serve, warn for the others, which print their own results)
// and --log-format (text or json; logs go to standard error).
//
// # Decisions
//
//   - tenant, write, query, tables and reconcile --dry-run work on the
//     store, or with --server URL (or TIMETABLE_SERVER) through a running
//     server's HTTP API, printing the same output either way (remote.go
//     says how). Pebble lets one process at a time open a store, so with a
//     server running on the same directory the store path fails with a
//     message saying so; --server is the way then.
//   - On the store, write and query need the tenant named: --tenant, or
//     the environment variable TIMETABLE_TENANT. The tenant must exist
//     (timetable tenant add): a misspelt name fails instead of filling a
//     tenant nobody can read. Through a server the API key in
//     TIMETABLE_API_KEY names it.
//   - write reads NDJSON and writes it in batches (5,000 events by
//     default). Unlike the HTTP API, which refuses a request whole, it
//     skips bad lines, naming each by line number and reason on standard
//     error, and writes the rest; it exits with status 1 when it skipped
//     any. Writing a file again is always safe: event ids are idempotent.
//     --series gives a series to the events that have none. A progress
//     bar is drawn on standard error only when it is a terminal, and a
//     summary line ends the run.
//   - query follows cursors until --limit events (1,000 by default; 0
//     for all of the range). table and csv read every event before
//     printing, to know the field columns; json streams an array.
//   - tenant add, add-key and rotate print the new API key alone on
//     standard output, so that KEY=$(timetable tenant add acme) works, and
//     the warning that it cannot be shown again on standard error. rotate
//     without --key rotates the tenant's one live key, and asks for --key
//     when there are several.
//   - The environment variable TIMETABLE_NOW (RFC 3339 or Unix
//     milliseconds) stops the clock at that instant, for tests and demos:
//     write months, tiers and "now" come from it.
//   - Exit status: 0 on success, 1 on failure, 2 for a usage error (a
//     bad flag, argument or flag value), 130 when interrupted.
package cli
