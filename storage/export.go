package storage

import (
	"context"
	"errors"
	"time"
)

// ErrUnsupported marks a call the store, or its endpoint, does not have:
// DynamoDB's export to S3 and import from S3 on DynamoDB Local and
// dynalite, which answer UnknownOperationException. The caller takes
// another way; asking again does not help.
var ErrUnsupported = errors.New("timetable: not supported by the store")

// S3Location is a key prefix in an S3 bucket.
type S3Location struct {
	Bucket string
	// Prefix is the key prefix, without a leading slash; empty for the
	// whole bucket.
	Prefix string
}

// TableExport is a finished export of a table to S3 made by the store
// itself (DynamoDB's ExportTableToPointInTime, in DYNAMODB_JSON). Its
// files are in the layout AWS documents ("DynamoDB table export output
// format"): {Prefix}/AWSDynamoDB/{ID}/manifest-summary.json,
// manifest-files.json and data/*.json.gz.
type TableExport struct {
	// ARN is the export's ARN; ID is its last element, the folder of its
	// files under {Prefix}/AWSDynamoDB/.
	ARN, ID string
	// ItemCount is the number of items the export wrote, as the store
	// reports it.
	ItemCount int64
	// BilledBytes is the size of the table the export was billed for.
	BilledBytes int64
	// ExportTime is the point in time the export is of.
	ExportTime time.Time
	// ManifestKey is the key of the export's manifest-summary.json.
	ManifestKey string
}

// TableImport is a finished import of a table from S3 made by the store
// itself (DynamoDB's ImportTable).
type TableImport struct {
	ARN string
	// Items is the number of items written to the table, Processed the
	// number read from the source and Errors the number that could not be
	// written (malformed, over the limits).
	Items, Processed, Errors int64
}

// Exporter is a store that exports a table to S3, and imports one from S3
// into a new table, without reading or writing it through the table's
// capacity. Both block until the job is done or ctx ends; a job that ctx
// ended goes on in the store, and the same call again (same table and
// location) waits for that job instead of starting another. They return
// an error wrapping ErrUnsupported when the endpoint lacks the calls.
type Exporter interface {
	// ExportTable exports table to dest in DYNAMODB_JSON, gzip-compressed,
	// turning on what the export needs (point-in-time recovery) first.
	ExportTable(ctx context.Context, table string, dest S3Location) (TableExport, error)
	// ImportTable creates the table spec names, with the key schema of
	// every table of the store, and fills it from the gzip-compressed
	// DYNAMODB_JSON files under src. It does not set the spec's TTL or
	// auto scaling.
	ImportTable(ctx context.Context, spec TableSpec, src S3Location) (TableImport, error)
}
