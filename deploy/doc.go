// Package deploy holds the AWS SAM template that deploys timetable's
// lifecycle manager (cmd/timetable-lambda) on a schedule, and the tests
// that keep it honest: it parses, runs the function the way the binary
// expects, grants only the actions the lifecycle manager uses, each on
// the resource it needs, and every permission on a table under the
// prefix only for tables tagged timetable:meta with this deployment's
// meta table (evaluated with internal/iampolicy), and docs/operations.md's
// Permissions table lists exactly the actions it grants.
//
// What the parameters decide beyond what was asked: a deployment's tag value
// is its meta table's name, which is unique in an account and region as
// table names are, so it needs no parameter of its own; the optional
// ArchiveKMSKey grants KMS only through S3 of the region
// (kms:ViaService); TableQuota is passed to the function, which measures
// the region's tables against it in its heartbeat.
//
// cmd/timetable-lambda's TestTemplateKeepsDeploymentsApart runs two
// deployments and evaluates the template's statements on the calls they
// make; TestTemplateGrantsWhatTheFunctionCalls requires the grants to be
// those calls' actions.
package deploy
