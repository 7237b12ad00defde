// Package agg is the arithmetic of timetable's aggregates: what the
// engine adds an event's values into, merges, stores as a rollup and
// turns into a Bucket. It does no I/O and knows no tables: the engine
// reads the events and rollups, and hands their values here. Raw
// aggregates and rollups summarise with the same Summary and turn it
// into a Bucket with the same method, so both give the same answer to
// the digit.
//
// # Floor plan
//
//	funcs.go       the names of the aggregation functions
//	summary.go     Summary: a mergeable summary of events, by field
//	               (count, exact sum, min, max, first, last), and the
//	               OrderKey that orders first and last as the merge does
//	decimal.go     exact decimal sums (apd), with an int64 fast path, and
//	               averages of AvgDigits digits
//	sketch.go      the functions that need more than totals: distinct
//	               counts (exact, then HyperLogLog), quantiles (exact,
//	               then DDSketch),
//	               counters' delta and rate
//	rollupitem.go  a Summary as a rollup item's attributes, and back
//	bucket.go      Bucket, one time bucket of an answer, and its JSON
//
// It is internal to the engine: package engine re-exports Bucket and the
// function names its callers use.
package agg
