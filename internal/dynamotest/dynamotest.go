// Package dynamotest names, for tests, the DynamoDB-API server they run
// against and what it lacks of AWS's DynamoDB, in one place.
//
// `make test` runs every DynamoDB suite twice, against dynalite and
// against AWS's DynamoDB Local (scripts/with-dynamodb.sh starts each and
// sets TIMETABLE_DYNAMODB_ENDPOINT and TIMETABLE_DYNAMODB_SERVER). A test
// that needs something a server lacks asks Lacks and skips that part with
// the reason given here; nothing else is skipped.
//
// # What no local server has, and who stands in
//
// Both servers lack all of DynamoDB's control plane beyond the table's
// billing mode and provisioned throughput. The DynamoDB test backend
// (internal/backends) puts a dynamofault.ControlPlane in front of the
// server, which keeps the rules and records and answers for the rest, so
// the suites see what AWS's DynamoDB would answer:
//
//   - limits on how often a table changes: four switches to on demand in
//     any 24 hours (DynamoDB Local 1.25.1 took six in a few seconds),
//     four capacity decreases a UTC day and then one an hour up to 27,
//     two class changes in 30 days, one TTL change an hour: neither
//     server enforces any;
//   - TableClass, WarmThroughput and OnDemandThroughput: DynamoDB Local
//     and dynalite take them and silently ignore them (DescribeTable
//     says STANDARD, and no warm throughput or maximum);
//   - DeletionProtectionEnabled: not kept, so DeleteTable of a protected
//     table succeeds on both;
//   - point-in-time recovery (UpdateContinuousBackups,
//     DescribeContinuousBackups), table export to S3 and Application
//     Auto Scaling: neither server has them (the store drops a PITR
//     setting on an endpoint that answers UnknownOperationException).
//
// Features below are what one server lacks and the other has.
package dynamotest

import (
	"os"
	"testing"
)

// Environment variables scripts/with-dynamodb.sh sets.
const (
	// EndpointEnv is the server's address.
	EndpointEnv = "TIMETABLE_DYNAMODB_ENDPOINT"
	// ServerEnv names the server: "dynalite" or "dynamodb-local"; another
	// or no name stands for a server lacking nothing (AWS's own).
	ServerEnv = "TIMETABLE_DYNAMODB_SERVER"
)

// Feature is a part of DynamoDB's API or behaviour a server may lack.
type Feature string

// Features a local server may lack.
const (
	// TTL: UpdateTimeToLive and DescribeTimeToLive.
	TTL Feature = "TTL"
	// Tagging: TagResource, UntagResource and ListTagsOfResource.
	Tagging Feature = "tagging"
	// CaseSensitiveNames: tables whose names differ only in letter case
	// are different tables.
	CaseSensitiveNames Feature = "case-sensitive table names"
	// DeepExpressions: an expression of 31 parentheses one inside
	// another, which DynamoDB takes, is answered in reasonable time.
	DeepExpressions Feature = "deeply nested expressions"
)

// lacks is what each server lacks, and why: the one list of it.
var lacks = map[string]map[Feature]string{
	"dynalite": {
		TTL:             "dynalite implements no TTL calls (UpdateTimeToLive answers UnknownOperationException)",
		DeepExpressions: "dynalite's expression parser backtracks: a FilterExpression of 31 NOT ( ... ) one inside another was not answered in 10 minutes",
	},
	"dynamodb-local": {
		Tagging:            "DynamoDB Local answers every tag call with UnknownOperationException: Tagging is not currently supported in DynamoDB Local",
		CaseSensitiveNames: "DynamoDB Local keeps tables in SQLite, whose names ignore letter case: a second table named like another but for case fails with InternalFailure",
	},
}

// Server returns the name of the server the tests run against, or "" when
// none is configured.
func Server() string {
	if os.Getenv(EndpointEnv) == "" {
		return ""
	}
	return os.Getenv(ServerEnv)
}

// Lacks returns why the server the tests run against lacks f, or "" when
// it has it.
func Lacks(f Feature) string {
	return lacks[Server()][f]
}

// SkipUnless skips tb, with the reason, when the server lacks f.
func SkipUnless(tb testing.TB, f Feature) {
	tb.Helper()
	if why := Lacks(f); why != "" {
		tb.Skipf("%s lacks %s: %s", Server(), f, why)
	}
}
