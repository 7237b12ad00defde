// Package deploy holds the AWS SAM template that deploys timetable's
// lifecycle manager (cmd/timetable-lambda) on a schedule, and the test
// that keeps it honest: it parses, runs the function the way the binary
// expects, and grants only the actions the lifecycle manager uses, on the
// tables of the configured prefix.
package deploy
