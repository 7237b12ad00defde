package lifecycle

import (
	"context"

	"github.com/timetabledb/timetable/family"
)

// Archiver exports tables to one archive target. Package archive
// implements it; the Reconciler opens one per target with
// Options.OpenArchiver.
type Archiver interface {
	// Verified reports whether table has an archive that was read back and
	// checked.
	Verified(ctx context.Context, table string) (bool, error)
	// Archive exports table, reads the export back and verifies it (item
	// count and SHA-256 in a manifest).
	Archive(ctx context.Context, table string) error
}

// OpenArchiverFunc opens the Archiver of an archive target ("file://DIR",
// "s3://bucket/prefix"), reading the tables of the reconciler's store and
// archiving them in format (empty for the default, family.ArchiveNDJSON).
type OpenArchiverFunc func(target string, format family.ArchiveFormat) (Archiver, error)
