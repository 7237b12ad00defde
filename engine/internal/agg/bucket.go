package agg

import "github.com/timetabledb/timetable/api"

// Bucket is one time bucket of an aggregate: the HTTP API's type
// (package api owns its fields and its JSON), which the summaries fill
// and the engine returns as it is.
type Bucket = api.Bucket
