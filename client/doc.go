// Package client is the Go client of timetable's HTTP API: a Client
// sends the requests of package api to a running `timetable serve` and
// returns its answers as api's types.
//
// # Basics
//
// New takes the server's URL and a credential: a tenant's API key for
// the tenant's routes (Write, Query, Events, Aggregate, Tables, Series),
// or the admin token for the admin routes (Tenants, AddTenant, Keys,
// PhysicalTables, Plan, …). Every method takes a context first, which
// bounds the whole call, waits for a retry included. A Client is safe
// for use by several goroutines at once.
//
// Numbers among events' fields and aggregate results are decoded as
// json.Number, exact, as the server writes them; times are in UTC.
//
// # Errors
//
// An answer that is not 2xx is returned as an *Error, carrying the HTTP
// status, its api code (api.CodeOf) and the server's api.ErrorBody: its
// message, and for a write the refused events by index. A failure to
// reach the server is the *url.Error of net/http, wrapped.
//
// A 503 with Retry-After says the same request may succeed after the
// wait (the store throttled, the server was busy or closing): the client
// sends it again after that wait, at most Options.Attempts times in all,
// and returns the last *Error if none succeeds. Writes are idempotent
// (event ids are content hashes), so sending one again stores nothing
// twice, except events sent without a time to a server that stamps
// them with the time it receives each request.
//
// # Caveats
//
// A write is one request: the server refuses a body over its limits (by
// default 16 MiB and 100,000 events) with 413, and a caller with more
// events splits them. A page of Query is at most the server's largest;
// Events walks every page.
package client
